"""A memo version's ``changelog.jsonl`` in the export (memos.services.version_export): one object per
synthesis iteration of the run that made it, read from its stored steps; an iteration that never finished is
left out."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agents.memo.outputs import IterationOutput
from memos.models import AgentStep, ArtefactVersion
from memos.pipeline.memo.plan import ITERATION


def iterations(version: ArtefactVersion) -> list[dict[str, Any]]:
    steps = AgentStep.objects.filter(run_id=version.run_id, status=AgentStep.Status.DONE, kind=ITERATION)
    return [row for step in steps.order_by("position") if (row := _iteration(step.output)) is not None]


def _iteration(output: object) -> dict[str, Any] | None:
    try:
        iteration = IterationOutput.model_validate(output)
    except ValidationError:
        return None
    check = iteration.hill_climb
    return {
        "iteration": check.iteration,
        "jplus": check.jplus,
        "jminus": check.jminus,
        "delta_jplus": check.delta_jplus,
        "delta_jminus": check.delta_jminus,
        "passed": check.passed,
        "reason": check.reason,
        "rewritten": iteration.rewritten,
        "gaps_answered": sum(1 for gap in iteration.gaps if gap.answered),
        "gaps": len(iteration.gaps),
        "stopped": bool(iteration.escape and iteration.escape.stop),
    }
