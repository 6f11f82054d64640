"""A run's steps: planned when the run starts, so its page draws the whole pipeline from the first second."""

from __future__ import annotations

from uuid import UUID

from memos.models import AgentStep, Run
from memos.pipeline.errors import plain
from memos.pipeline.workflows import Unfinished, Workflow


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


def unfinished_parts(run_id: UUID | str) -> tuple[Unfinished, ...]:
    """Every step of the run that failed, in the order they were planned, with its reason in words: what a
    version frozen from the run did not get. A step's error begins with its title (StageContext.fail_step);
    the reason is said once."""
    failed = AgentStep.objects.filter(run_id=run_id, status=AgentStep.Status.FAILED).order_by("id")
    parts = []
    for step in failed:
        # A message stored with a database's own words before they were put in words is said in words.
        reason = plain(step.error.removeprefix(f"{step.title}: ").strip()) or "it did not finish"
        parts.append(Unfinished(step=step.title, reason=reason, stage=step.stage, key=step.key))
    return tuple(parts)


def said(parts: tuple[Unfinished, ...]) -> str:
    """The parts that did not finish, as one line: "not finished: A (why); B (why)"."""
    return "not finished: " + "; ".join(f"{part.step} ({part.reason})" for part in parts)
