"""A deck version's ``changelog.jsonl`` in the export (memos.services.version_export, seed 001 section 7): one
object per lap of the refinement loop that made it, read from its run's stored lap steps; a lap that never
finished is left out."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agents.deck.outputs import LapOutput
from memos.models import AgentStep, ArtefactVersion
from memos.pipeline.deck.plan import LAP


def laps(version: ArtefactVersion) -> list[dict[str, Any]]:
    steps = AgentStep.objects.filter(run_id=version.run_id, status=AgentStep.Status.DONE, kind=LAP)
    return [row for step in steps.order_by("position") if (row := _lap(step.output)) is not None]


def _lap(output: object) -> dict[str, Any] | None:
    try:
        lap = LapOutput.model_validate(output)
    except ValidationError:
        return None
    order = lap.work_order
    return {
        "lap": lap.lap,
        "action": order.action if order is not None else None,
        "target": order.target if order is not None else None,
        "slides_changed": lap.changed,
        "composite": lap.scored.composite if lap.scored is not None else None,
        "accepted": lap.decision.accepted,
        "margin": lap.decision.margin,
        "reasons": lap.decision.reasons,
        "best": lap.best,
        "drift": lap.drift,
        "stop": lap.stop or None,
        "data_version": lap.data_version or None,
        "error": lap.error or None,
    }
