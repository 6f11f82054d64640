"""The memo's J+/J- rubric as code reads it: composites from the weights and the thresholds, all from data.

A run is judged by the rubric version it pinned when it started (``memos.services.governance``); the seed
file ``prompts/rubrics/memo_j.yaml`` is what a caller without a pinned version (a unit test, a run from before
rubrics were versioned) is judged by. Nothing here is a number of its own: change the file or the admin's
version and the verdict, the hill-climb rule and the escape valve follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS
from agents.rubrics import Contract, Rubric, parse_rubric

MEMO_RUBRIC = "memo_j"
# agents.memo.verdict, hillclimb and escape read these; the J+/J- dimension names are schema fields.
MEMO_CONTRACT = Contract(
    dimensions={"jplus": JPLUS_DIMENSIONS, "jminus": JMINUS_DIMENSIONS},
    thresholds=frozenset(
        {
            "accept_min_jplus",
            "accept_max_jminus",
            "hill_climb_min_jplus_gain",
            "hill_climb_max_jminus_change",
        }
    ),
    anchored=True,  # seed 000: "each score level has a quoted example, not just an adjective"
)

SEED_FILE = Path(__file__).resolve().parents[2] / "prompts" / "rubrics" / f"{MEMO_RUBRIC}.yaml"

Composite = int | float  # a whole number while the weights are equal, as J+ and J- always were


@dataclass(frozen=True)
class MemoRubric:
    rubric: Rubric

    def jplus(self, scores: BaseModel) -> Composite:
        return self.rubric.composite("jplus", scores.model_dump())

    def jminus(self, scores: BaseModel) -> Composite:
        return self.rubric.composite("jminus", scores.model_dump())

    @property
    def accept_min_jplus(self) -> Composite:
        return _number(self.rubric.thresholds["accept_min_jplus"])

    @property
    def accept_max_jminus(self) -> Composite:
        return _number(self.rubric.thresholds["accept_max_jminus"])

    @property
    def min_jplus_gain(self) -> Composite:
        return _number(self.rubric.thresholds["hill_climb_min_jplus_gain"])

    @property
    def max_jminus_change(self) -> Composite:
        return _number(self.rubric.thresholds["hill_climb_max_jminus_change"])


def anchors_text(rubric: Rubric) -> str:
    """Every level of every dimension as a judge reads it: "- key: 0 descriptor, e.g. "example"; 1 ..."."""
    return "\n".join(
        f"- {dimension.key}: "
        + "; ".join(f"{score} {dimension.anchor(score)}" for score, _, _ in dimension.levels())
        for objective in rubric.objectives
        for dimension in objective.dimensions
    )


def anchor_examples() -> tuple[str, ...]:
    """The seed rubric's quoted examples: the evaluator's prompt, filled in with the seed rubric's anchors
    (``anchors_text``), quotes each one, since the evaluator compares a memo with them."""
    return tuple(
        example
        for objective in seed_rubric().rubric.objectives
        for dimension in objective.dimensions
        for _, _, example in dimension.levels()
        if example
    )


@lru_cache(maxsize=1)
def seed_rubric() -> MemoRubric:
    return MemoRubric(parse_rubric(SEED_FILE.read_bytes(), origin=str(SEED_FILE), contract=MEMO_CONTRACT))


def _number(value: float) -> Composite:
    return int(value) if float(value).is_integer() else value
