"""Steps a run plans but does not need (memo iterations after the escape valve, a deck's rebuilds after a
draft cleared R1, laps after the loop stopped): marked skipped with the reason on their cards, through the
stage's fence."""

from __future__ import annotations

from django.utils import timezone

from memos.models import AgentStep
from memos.pipeline.cards import publish_step
from memos.pipeline.claims import fenced_write
from memos.pipeline.context import StageContext


def skip_steps(ctx: StageContext, stage: str, keys: list[str], reason: str) -> None:
    if not keys:
        return
    rows = AgentStep.objects.filter(run_id=ctx.run.pk, stage=stage, key__in=keys).exclude(
        status__in=[AgentStep.Status.DONE, AgentStep.Status.SKIPPED]
    )

    def write() -> list[AgentStep]:
        rows.update(status=AgentStep.Status.SKIPPED, summary=reason, finished_at=timezone.now())
        return list(AgentStep.objects.filter(run_id=ctx.run.pk, stage=stage, key__in=keys))

    ctx.settle()
    for step in fenced_write(ctx.hold, write, what="skipping the steps not needed"):
        publish_step(step)
