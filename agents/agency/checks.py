"""Code's checks of what the agency's models wrote: no typed figure reaches a reader, a quote is a quote, a
change of position names what moved it.

- ``shown`` (agents.text.shown, re-exported): model prose as a reader gets it, a sentence that typed a figure
  withheld whole with code's one line on it.
- ``answer_check``: the critic's point a board member says it answers, found word for word in the critic's
  latest turn (agents.text.quotes); ``echoes``: an answer that is mostly the critic's sentences copied back.
- ``change``: a position that differs from the member's last turn is a change; it is supported when it cites
  an id the member had not cited before in the thread, or quotes the critic's words. Code records which.
- ``cited_figures``: the run's facts as the claim reading (agents.text.figure_claims) takes them: an
  inference's trend word must hold at each step of the series it cites, over the metric it names, and an
  inference that is advice is no finding;
- ``reported``: what a cited document says, quoted by code, where F2's claims were all withheld as advice: F2
  then says what the documents report, never nothing and never advice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agents.agency.outputs import Source
from agents.evidence import EvidenceItem
from agents.text.figure_claims import CitedFigure, advice, cited_figure
from agents.text.figures import Ids
from agents.text.quotes import MIN_WORDS, fold, quote_problem
from agents.text.scripts import Language
from agents.text.sentences import sentences
from agents.text.shown import Shown, shown

__all__ = ["Change", "Shown", "answer_check", "change", "cited_figures", "echoes", "reported", "shown"]

QUOTE_CHARS = 200  # a quote longer than this is cut at a word and marked "…": one line per document
NOTHING_REPORTED = "The documents cited report nothing the desk can state."


def cited_figures(facts: Iterable[EvidenceItem]) -> dict[str, CitedFigure]:
    """The run's facts by id, as a claim's figures are read: the value as its cue shows it, without the
    filing ("USD 110,543 M", not "USD 110,543 M (10-K 2023-11-03)"), beside its period."""
    found: dict[str, CitedFigure] = {}
    for item in facts:
        shown_as = (item.cue or item.summary).split(" (", 1)[0]
        figure = cited_figure(
            fact_id=item.evidence_id,
            metric=item.metric,
            period=item.period,
            value=item.value,
            shown=shown_as,
            unit=item.unit,
        )
        if figure is not None:
            found[item.evidence_id] = figure
    return found


def reported(
    document: Source, keep: frozenset[str] = frozenset(), *, language: Language | None = None
) -> str:
    """Code's line on what one document says: its source and date, and its first sentence that a reader may
    be shown (no typed figure, not in another script, not itself advice), quoted; "" when it has none."""
    for sentence in sentences(document.text if document.text.strip() else document.title):
        text = shown(sentence.strip(), frozenset(), keep, language=language)
        words = text.text.split()
        if text.withheld or len(words) < MIN_WORDS or advice(text.text) or "[[" in text.text:
            continue
        quote = text.text if len(text.text) <= QUOTE_CHARS else _cut(text.text)
        when = str(document.published) if document.published else "undated"
        stale = ", stale" if document.stale else ""
        return f"{document.source} ({when}{stale}) reports: \u201c{quote}\u201d"
    return ""


def _cut(text: str) -> str:
    return text[:QUOTE_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + "\u2026"


def echoes(reply: str, critic_turns: Sequence[str]) -> bool:
    """Whether most of a reply is the critic's own sentences copied back (a small model's way of answering):
    such a reply answers nothing, and code says so on the turn."""
    said = [fold(sentence) for sentence in sentences(reply) if len(sentence.split()) >= MIN_WORDS]
    if not said:
        return False
    critic = " ".join(fold(turn) for turn in critic_turns)
    copied = sum(1 for sentence in said if sentence.rstrip(".!? ") in critic)
    return copied * 2 >= len(said)


def answer_check(answers: str, critic_turn: str) -> str:
    """Why the quote is not the critic's words, or "" when it is."""
    return quote_problem(answers, [critic_turn], where="the critic's latest turn")


@dataclass(frozen=True)
class Change:
    changed: bool
    basis: str  # code's record: what the change cited, or why it is unsupported
    supported: bool | None  # None when nothing changed


def change(
    *,
    previous: str | None,
    position: str,
    moved_by: str,
    citations: Iterable[str],
    cited_before: Iterable[str],
    critic_turns: Sequence[str],
    known_ids: Ids,
) -> Change:
    if previous is None or previous == position:
        return Change(False, "", None)
    before = set(cited_before)
    new = [
        ref for ref in [*citations, *_ids_in(moved_by, known_ids)] if ref in known_ids and ref not in before
    ]
    if new:
        return Change(
            True, f"{previous} → {position}: cites {', '.join(dict.fromkeys(new))}, new to the thread", True
        )
    if moved_by.strip() and not quote_problem(moved_by, critic_turns, where="the critic's turns"):
        return Change(
            True, f"{previous} → {position}: the critic's argument, \u201c{moved_by.strip()}\u201d", True
        )
    return Change(
        True, f"{previous} → {position}: names no new fact and quotes no argument of the critic", False
    )


def _ids_in(text: str, known_ids: Ids) -> list[str]:
    folded = fold(text)
    return [ref for ref in known_ids if fold(ref) in folded]
