"""Frozen prose as a version page shows it: text, and the ``[[fact id]]`` references resolved from the
version's frozen sources (the template escapes every part)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.text.figures import REF


@dataclass(frozen=True)
class Segment:
    text: str
    source: dict[str, Any] | None = None  # a ``[[fact id]]`` resolved from the version's frozen sources


def segments(text: str, sources: dict[str, dict[str, Any]]) -> list[Segment]:
    """Prose split into text and the frozen facts it references; the template escapes every part."""
    out: list[Segment] = []
    last = 0
    for match in REF.finditer(text):
        out.append(Segment(text[last : match.start()]))
        fact_id = match.group(1)
        out.append(Segment(fact_id, sources.get(fact_id, {"id": fact_id, "kind": "unresolved"})))
        last = match.end()
    out.append(Segment(text[last:]))
    return [segment for segment in out if segment.text]
