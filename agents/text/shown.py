"""Model prose as a reader gets it (agents.text.reader): a sentence that typed a figure is withheld whole and
one line of code's says so; ``[[fact id]]`` references stay for the renderer to print. Shared by the
workflows whose models write prose that cites figures by id (the agency, the screen)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.text.figures import Ids, Segment
from agents.text.reader import paragraph
from agents.text.scripts import Language


@dataclass(frozen=True)
class Shown:
    text: str  # what a reader sees, references kept as [[id]]
    note: str  # code's line on what it withheld, or ""
    withheld: int

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def _text(parts: Sequence[Segment]) -> str:
    return "".join(f"[[{part.text}]]" if part.kind == "fact" else part.text for part in parts).strip()


def shown(
    text: str, known_ids: Ids, keep: frozenset[str] = frozenset(), *, language: Language | None = None
) -> Shown:
    """``language``: the brief's; a sentence that slips into another script is withheld too."""
    para = paragraph(text, known_ids, keep, language)
    return Shown(_text(para.parts), para.note, para.withheld)
