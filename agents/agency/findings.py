"""What F2 is shown and what F1 and F2 hand the moves stage, by code (issue 32, rows 5 and 6 in the agency).

- ``screened``: the documents F2 may read and cite, promotion and spam left out (agents.text.promotion, the
  reading the screen's evidence uses), each one left out listed with what gave it away. On an embedded run,
  posts selling trading courses and stock picks reached F2, became its claims and then moves.
- ``same_as`` and ``merge``: claims that say the same thing merged into the first, every citation kept,
  so the analysts are not shown one finding twice as if two documents had found it. Two claims are one
  when their sentences are equal once case, punctuation and the company's name are set aside ("Apple's
  customers complain of waits." and "apple customers complain of waits"), or when they cite the same
  documents and their content words are near (``MIN_JACCARD``) with the same negation: "Posts report
  longer waits" and "posts report shorter waits" (3 of 5 content words shared) stay two claims, as do a
  claim and its denial.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.agency.dedup import CORPORATE, similarity
from agents.agency.outputs import Claim, Source
from agents.text.promotion import read

# Content words shared over all content words. 0.8, not the moves' 0.6: a claim is a sentence, and two
# sentences that share three words of five ("posts report longer waits" and "posts report shorter waits")
# say different things; a claim reworded keeps its content words ("complain of long waits for repairs" and
# "complain about long repair waits": the same five).
MIN_JACCARD = 0.8
COMPANY = "<company>"  # what the company's name, ticker and "the company" become in a claim's key
_WORD = re.compile(r"[a-z0-9<>]+")
_STOP = frozenset(
    """a an the of in on at for to from by with about over as and or is are was were be been has have had
    its their this that these those s""".split()  # noqa: SIM905 (a word list reads best as words)
)
_NEGATION = frozenset(("not", "no", "never", "none", "nothing", "without", "cannot", "nor", "neither"))
QUOTE_CHARS = 90  # of a post left out: enough to recognise it, no more of a spammer's text than that


@dataclass(frozen=True)
class Screened:
    """The documents F2 is shown, in order, and code's line on each one left out."""

    kept: list[Source]
    left_out: list[str]


def screened(documents: Sequence[Source]) -> Screened:
    """``documents`` less promotion and spam, and code's line on each left out: its id, what gave it away
    and its opening words."""
    kept: list[Source] = []
    left_out: list[str] = []
    for document in documents:
        verdict = read(f"{document.title} {document.text}")
        if not verdict.promotional:
            kept.append(document)
            continue
        text = document.text if document.text.strip() else document.title
        opening = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS].rsplit(" ", 1)[0] + "\u2026"
        left_out.append(f"{document.doc_id} ({verdict.why}): \u201c{opening}\u201d")
    return Screened(kept, left_out)


def left_out_note(screen: Screened) -> str:
    """The run's one line on what F2 was not shown, "" when nothing was left out."""
    count = len(screen.left_out)
    if not count:
        return ""
    total = count + len(screen.kept)
    return (
        f"code left out {count} of {total} document{'s' if total != 1 else ''} as promotion or spam "
        "before F2 read them"
    )


def names(company: str, ticker: str) -> tuple[str, ...]:
    """The words a claim names the company by, longest first: its legal name, that name without its
    corporate words ("Apple Inc." -> "apple"), its ticker and "the company"."""
    full = company.casefold().strip()
    short = " ".join(w for w in _WORD.findall(full.replace("'", " ")) if w not in CORPORATE)
    found = {full, short, ticker.casefold(), f"${ticker.casefold()}", "the company"}
    return tuple(sorted((n for n in found if n), key=len, reverse=True))


def key(statement: str, company_names: Sequence[str]) -> tuple[str, ...]:
    """A claim's words once case, punctuation and the company's name are set aside (the company's name
    becomes one token, its possessive dropped)."""
    text = statement.casefold().replace("\u2019", "'").replace("n't", " not")
    for name in company_names:
        text = re.sub(rf"(?<![\w$]){re.escape(name)}(?:'s?)?(?!\w)", f" {COMPANY} ", text)
    return tuple(_WORD.findall(text.replace("'", " ")))


def _content(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_stem(w) for w in words if w not in _STOP and w not in _NEGATION)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")) else word


def _same(first: Claim, statement: str, citations: Sequence[str], company_names: Sequence[str]) -> str:
    """Why a model's claim says what ``first`` says ("" when it does not)."""
    if first.by_code:
        return ""  # code's line quoting a document is no model claim to merge with
    one, other = key(first.statement, company_names), key(statement, company_names)
    if one == other:
        return "the same sentence once case, punctuation and the company's name are set aside"
    if not citations or set(first.citations) != set(citations):
        return ""
    if {w for w in one if w in _NEGATION} != {w for w in other if w in _NEGATION}:
        return ""
    if similarity(_content(one), _content(other)) >= MIN_JACCARD:
        return "the same claim citing the same documents"
    return ""


def same_as(
    statement: str, citations: Sequence[str], kept: Sequence[Claim], company_names: Sequence[str]
) -> tuple[int, str] | None:
    """The first kept claim that ``statement`` (citing ``citations``) repeats, by its index, and why; None
    when it says something of its own. Compared with each kept claim's own words, so a chain of small
    rewordings never merges two claims that are not near each other."""
    for index, first in enumerate(kept):
        why = _same(first, statement, citations, company_names)
        if why:
            return index, why
    return None


def merge(first: Claim, citations: Sequence[str]) -> Claim:
    """``first`` with the citations of a claim merged into it, its own first."""
    return first.model_copy(update={"citations": list(dict.fromkeys([*first.citations, *citations]))})
