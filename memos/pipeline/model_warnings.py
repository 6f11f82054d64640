"""The run page's banner when a run's judge shares a writer's model (seed 000's rubber stamp, seed 001's
Reviewer != Reviser): read from the finished step that recorded the warning."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ValidationError

from memos.models import AgentStep


def same_model_notices(steps: Sequence[AgentStep], kind: str, output: type[BaseModel]) -> list[str]:
    """The warning the first finished step of ``kind`` recorded, as the run page's notices."""
    for step in steps:
        if step.kind == kind and step.status == AgentStep.Status.DONE:
            try:
                warning = str(getattr(output.model_validate(step.output), "same_model_warning", ""))
            except ValidationError:  # written by an older version: its document says so; no banner
                return []
            return [warning] if warning else []
    return []
