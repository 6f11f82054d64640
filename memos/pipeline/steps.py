"""A run's steps: planned when the run starts, so its page draws the whole pipeline from the first second."""

from __future__ import annotations

from memos.models import AgentStep, Run
from memos.pipeline.workflows import Workflow


def plan_steps(run: Run, workflow: Workflow) -> None:
    AgentStep.objects.bulk_create(
        [
            AgentStep(
                run=run,
                stage=p.stage,
                key=p.key,
                kind=p.kind,
                title=p.title,
                role=p.role,
                position=p.position,
            )
            for p in workflow.plan(run.config)
        ]
    )
