"""The deck workflow's stages and steps (seed 001 section 1): their names, titles and kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.deck.profile import DeckConfig
from memos.pipeline.workflows import PlannedStep

# The workflow's name: stored in Run.workflow, and the kind of the versions its runs freeze.
NAME = "deck"

SCOPE = "scope"
DATA = "data"
DRAFT = "draft"
REFINE = "refine"
DECK = "deck"

# Step kinds (and the keys of the one-step kinds).
RUBRIC = "rubric"
FIGURES = "figures"
DRAFT_KIND = "draft"
BASELINE = "baseline"
LAP = "lap"


def draft_key(attempt: int) -> str:
    return f"draft-{attempt}"


def lap_key(number: int) -> str:
    return f"lap-{number}"


def plan(config: Mapping[str, Any]) -> list[PlannedStep]:
    deck = DeckConfig.model_validate(config)
    planned = [
        PlannedStep(SCOPE, SCOPE, SCOPE, "Scope (frozen brief)", "scope_builder"),
        PlannedStep(SCOPE, RUBRIC, RUBRIC, "Brief-specific rubric anchors", "rubric_builder", 1),
        PlannedStep(DATA, FIGURES, FIGURES, "Figures from the fact store (code)"),
    ]
    planned += [
        PlannedStep(
            DRAFT, draft_key(n), DRAFT_KIND, "First draft" if n == 1 else f"Rebuild {n - 1}", "drafter", n
        )
        for n in range(1, deck.max_rebuilds + 2)
    ]
    planned += [PlannedStep(REFINE, BASELINE, BASELINE, "Epoch baseline (R2)", "scorer")]
    planned += [
        PlannedStep(REFINE, lap_key(n), LAP, f"Lap {n}", "reviser", n) for n in range(1, deck.max_laps + 1)
    ]
    planned += [PlannedStep(DECK, DECK, DECK, "The deck (best so far, frozen)")]
    return planned
