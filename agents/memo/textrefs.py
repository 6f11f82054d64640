"""Model prose made safe to show: ``[[fact id]]`` becomes the fact's value from the store; any other number
a model typed is removed and counted (LLMs never own a number). Calendar years and quarter labels are
references to time, not figures, and stay."""

from __future__ import annotations

import re
from dataclasses import dataclass

REF = re.compile(r"\[\[([A-Za-z0-9.\-]+:[a-z0-9_]+:[A-Za-z0-9\-]+)\]\]")
# A figure: digits (with separators or decimals, a sign, currency, a scale or a percent) standing alone. Not a
# figure: digits inside a word or an id ("FY2024", "1w", "Q3"), the parts of an ISO date, a calendar year,
# or a lone digit counting things ("iteration 2", "3 falsifiers").
NUMBER = re.compile(
    r"(?<![\w\[.\-/:])[-+]?[$€£]?\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:%|percent\b|bps\b|bn\b|[kKmMbB]\b|million\b|billion\b|trillion\b|x\b))?(?![\w\-/:])"
)
NOT_A_FIGURE = re.compile(r"^(?:(?:19|20)\d{2}|\d)$")
REMOVED = "[figure removed]"


@dataclass(frozen=True)
class Segment:
    """A piece of rendered prose: plain text, a fact reference, or a removed model-typed number."""

    kind: str  # "text", "fact", "removed"
    text: str
    fact_id: str = ""


def segments(text: str, known_ids: set[str] | frozenset[str]) -> list[Segment]:
    """Split prose into text, fact references (unknown ids are shown as removed) and removed numbers."""
    out: list[Segment] = []
    position = 0
    for match in REF.finditer(text):
        out.extend(_plain(text[position : match.start()]))
        fact_id = match.group(1)
        out.append(Segment("fact", fact_id, fact_id) if fact_id in known_ids else Segment("removed", REMOVED))
        position = match.end()
    out.extend(_plain(text[position:]))
    return out


def _plain(text: str) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for match in NUMBER.finditer(text):
        token = match.group(0).strip()
        if NOT_A_FIGURE.match(token):
            continue
        if match.start() > position:
            out.append(Segment("text", text[position : match.start()]))
        out.append(Segment("removed", REMOVED))
        position = match.end()
    if position < len(text):
        out.append(Segment("text", text[position:]))
    return out


def removed_count(text: str, known_ids: set[str] | frozenset[str]) -> int:
    return sum(1 for segment in segments(text, known_ids) if segment.kind == "removed")


def fact_ids_in(text: str) -> list[str]:
    return [match.group(1) for match in REF.finditer(text)]
