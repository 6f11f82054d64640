"""The memo workflow's stages and steps: their names (the only place they are written), titles and kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.memo.roster import SPECIALISTS, MemoConfig
from memos.pipeline.workflows import PlannedStep

# The workflow's name: stored in Run.workflow, and the kind of the versions its runs freeze.
NAME = "memo"

DATA = "data"
SPECIALISTS_STAGE = "specialists"
SYNTHESIS = "synthesis"
EVALUATION = "evaluation"
MEMO = "memo"

# Step keys and kinds.
EVIDENCE = "evidence"
AUDIT = "audit"
ITERATION = "iteration"
SPECIALIST = "specialist"


def iteration_key(number: int) -> str:
    return f"iteration-{number}"


def plan(config: Mapping[str, Any]) -> list[PlannedStep]:
    """Every step a memo run takes, in order: what its page draws from the start."""
    memo = MemoConfig.model_validate(config)
    planned = [PlannedStep(DATA, EVIDENCE, EVIDENCE, "Evidence gathered by code")]
    planned += [
        PlannedStep(SPECIALISTS_STAGE, name, SPECIALIST, SPECIALISTS[name].title, name, index)
        for index, name in enumerate(memo.roster)
    ]
    planned += [PlannedStep(SYNTHESIS, AUDIT, AUDIT, "Fact-stability audit (code)")]
    planned += [
        PlannedStep(SYNTHESIS, iteration_key(n), ITERATION, f"Synthesis iteration {n}", "synthesizer", n)
        for n in range(1, memo.iterations + 1)
    ]
    planned += [PlannedStep(EVALUATION, EVALUATION, EVALUATION, "Evaluator's report", "evaluator")]
    planned += [PlannedStep(MEMO, MEMO, MEMO, "Investment memo")]
    return planned
