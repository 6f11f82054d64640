"""Ceilings code puts on the judge's scores where code measured the opposite (seed 001 section 9: the judge
drifts and inflates; code never raises a score, it only caps one that a measurement contradicts).

- Slides that repeat one another's bullets, tables or charts: "Clean & concise story" cannot be above the
  rubric's 1 ("redundant slides and a wandering line"), nor R1's "Narrative flow" above 2.
- A wall of text found by the lint: "Visual digestibility" and R1's "Visual baseline" at most 2.
- A score whose quoted evidence is not in the deck: at most 3 (the rubric's "most competent decks land at 3"):
  a judge that cannot point at what it praises gets no credit above the middle.

Each applied ceiling is named, so the run page can say why a score is lower than the judge gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

REPEATED = {"clean_concise_story": 1, "narrative_flow": 2}
WALLS = {"visual_digestibility": 2, "visual_baseline": 2}
UNQUOTED = 3


def ceilings(
    scores: Mapping[str, int], *, repeated: int, walls: int, quotes: Sequence[tuple[str, bool]]
) -> tuple[dict[str, int], list[str]]:
    """The scores with every ceiling applied, and a note for each one that lowered a score. ``quotes`` are
    (dimension, found in the deck) pairs."""
    capped = dict(scores)
    notes: list[str] = []

    def cap(key: str, most: int, why: str) -> None:
        if key in capped and capped[key] > most:
            notes.append(f"{key} {capped[key]} -> {most}: {why}")
            capped[key] = most

    if repeated:
        for key, most in REPEATED.items():
            cap(key, most, f"{repeated} slide parts repeat another slide's")
    if walls:
        for key, most in WALLS.items():
            cap(key, most, f"{walls} walls of text")
    for dimension, found in quotes:
        if not found:
            cap(dimension, UNQUOTED, "its quoted evidence is not in the deck")
    return capped, notes
