"""Model prose as a reader gets it: whole sentences, one line of code's at the end of a paragraph for what it
withheld, and no sentence twice.

Every workflow shows model-written paragraphs (a memo's analysis, a deck's bullets, a debate's turns, a sector
narrative) under the same rule: a sentence that states a figure no cited fact backs, or slips into another
script than the brief's, is not shown (agents.text.figures), nor is one with a hole where a figure
was barred or a word babbled over and over (agents.text.blanks). A note in place of each such sentence made a
paragraph read "Apple Inc. [withheld] Apple Inc. [withheld]"; here the paragraph keeps the sentences it can
show, in order, and ends with one line saying how many were withheld and why. A paragraph left with nothing
says so in that one line. A sentence the model wrote twice in a paragraph is shown once (a small model
repeats itself when it runs out of things to say), and counted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from agents.text.blanks import blank_problem
from agents.text.figures import UNKNOWN_REFERENCE, Ids, Segment, joined, merged, segments
from agents.text.scripts import Language, Slip, note, slips
from agents.text.sentences import sentences

_BLANKS = re.compile(r"\s+")
# "(cites AAPL:cash:FY2025 and AAPL:capex:FY2025)": the synthesizer reads the specialists' claims listed
# that way by code and copies the form into its prose; its evidence is the memo's citations, not its words.
CITATION_NOTE = re.compile(r"\s*\((?:cites|citing|see|source[s]?:)\s[^()]*:[^()]*\)", re.IGNORECASE)


def without_citation_notes(text: str) -> str:
    """``text`` without the citation lists a model copied into its prose from how code lists evidence."""
    return CITATION_NOTE.sub("", text)


@dataclass(frozen=True)
class Paragraph:
    """What a reader is shown of one model-written paragraph."""

    parts: list[Segment]  # the sentences shown, as text and fact references
    sentences: int  # sentences the model wrote (repeats included)
    withheld: int  # sentences withheld
    repeated: int  # sentences collapsed because the paragraph already said them
    reasons: list[str] = field(default_factory=list)  # why, in code's words, for the note
    slipped: list[Slip] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(part.text.strip() for part in self.parts)

    @property
    def note(self) -> str:
        """Code's one line for the paragraph ("" when nothing was withheld)."""
        if not self.withheld:
            return ""
        why = "; ".join(self.reasons)
        if self.empty:
            return f"Nothing of this paragraph can be shown: {why}."
        count = "a sentence" if self.withheld == 1 else f"{self.withheld} sentences"
        return f"Code withheld {count} of this paragraph: {why}."


def paragraph(
    text: str,
    known_ids: Ids,
    keep: frozenset[str] = frozenset(),
    language: Language | None = None,
    *,
    withholds: Callable[[str], bool] | None = None,
) -> Paragraph:
    """``text`` as a reader is shown it: the sentences with nothing to withhold, repeats collapsed, and the
    kinds of figure (and scripts) of those withheld, for the paragraph's one note. ``withholds``: a
    workflow's own rule for what it withholds, where code repairs more before a reader sees the text (a
    deck prints a typed number a figure backs as that figure). A sentence with a figure's place left empty or
    one word said over and over (agents.text.blanks) is withheld in every workflow, its reason in the note."""
    parts: list[Segment] = []
    seen: set[str] = set()
    kinds: list[str] = []
    slipped: list[Slip] = []
    others: list[str] = []
    total = withheld = repeated = 0
    for sentence in sentences(text):
        if not sentence.strip():
            continue
        total += 1
        key = _key(sentence)
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        pieces = segments(sentence, known_ids, keep)
        removed = [piece.what for piece in pieces if piece.kind == "removed"]
        found = slips(sentence, language) if language is not None else []
        if withholds(sentence) if withholds is not None else (removed or found):
            withheld += 1
            kinds.extend(removed)
            slipped.extend(found)
            continue
        problem = blank_problem(sentence)
        if problem:
            withheld += 1
            others.append(problem)
            continue
        parts.extend(pieces)
    reasons = _reasons(kinds, slipped) + list(dict.fromkeys(others))
    return Paragraph(_merged(parts), total, withheld, repeated, reasons, slipped)


def _key(sentence: str) -> str:
    return _BLANKS.sub(" ", unicodedata.normalize("NFKC", sentence)).strip().casefold()


def _merged(parts: list[Segment]) -> list[Segment]:
    """Adjacent plain text as one segment (agents.text.figures.merged), without the trailing blank."""
    out = merged(parts)
    if out and out[-1].kind == "text":
        out[-1] = Segment("text", out[-1].text.rstrip())
    return out


def _reasons(kinds: list[str], slipped: list[Slip]) -> list[str]:
    distinct = list(dict.fromkeys(kinds))
    typed = [kind for kind in distinct if kind != UNKNOWN_REFERENCE]
    reasons = []
    if typed:
        reasons.append(f"it stated {joined(typed)} the model typed, which no cited fact backs")
    if UNKNOWN_REFERENCE in distinct:
        reasons.append("it referred to a figure the run was not given")
    if slipped:
        reasons.append(f"it slipped into another script than the brief's ({note(slipped)})")
    return reasons
