"""The memo's calls that run side by side, and why each may (memos.pipeline.breadth)."""

from __future__ import annotations

from memos.pipeline.breadth import Breadth

SPECIALIST_BRIEFS = Breadth(
    "specialists",
    "each specialist reads its own slice of the evidence and writes its own brief; none waits on another's",
)
EVALUATORS = Breadth(
    "evaluators",
    "the evaluator and a second evaluator grade the same memo apart; code keeps the more conservative "
    "verdict",
    distinct_verdicts="each on another model: the second is asked only when configured on another model",
)
