"""The deck's prompts a model server may read before any brief (agents.llm.warm): the system text of every
role a deck asks, in the order a first deck needs them. The judge's prompts name the rubric a new run pins
(its title and every anchor) in their system text, the same for every deck until an admin saves another
version: about 1,400 tokens each that a deck's R1 gate and its first R2 score would read first. T11's
re-score begins with the scorer's own text (prompts/deck_rescore.md), so it is warmed with it."""

from __future__ import annotations

from agents.deck.rubrics import DECK_R1, DECK_R2
from agents.llm.roles import Role
from agents.llm.warm import WarmPrompt
from memos.models import Run
from memos.pipeline.deck.judging import GATE, SCORER, dimensions_text
from memos.pipeline.prompts import model_written_anchors, rubric
from memos.pipeline.warming import warm_prompt


def warm_prompts(run: Run) -> list[WarmPrompt]:
    """``run`` pins the versions (a new run's: what it would start with)."""
    order = [
        ("deck_scope", Role.SCOPE_BUILDER, None),
        ("deck_framing", Role.DRAFTER, None),
        ("deck_drafter", Role.DRAFTER, None),
        (GATE, Role.SCORER, _rubric_values(run, DECK_R1, protected=False)),
        (SCORER, Role.SCORER, _rubric_values(run, DECK_R2, protected=True)),
        ("deck_planner", Role.PLANNER, None),
        ("deck_reviser", Role.REVISER, None),
    ]
    warmed = (warm_prompt(run, name, role, values) for name, role, values in order)
    return [found for found in warmed if found is not None]


def _rubric_values(run: Run, name: str, *, protected: bool) -> dict[str, str]:
    """The judge's ``{rubric}`` and ``{dimensions}`` as ``judging.judge_prompt`` fills them for ``run``."""
    pinned = rubric(name, run)
    model_written = model_written_anchors(name, run.rubric_versions)
    return {
        "rubric": pinned.title,
        "dimensions": dimensions_text(pinned, protected=protected, model_written=model_written),
    }
