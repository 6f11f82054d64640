"""Steps a run plans but does not need (memo iterations after the escape valve, a deck's rebuilds after a
draft cleared R1, laps after the loop stopped): marked skipped with the reason on their cards, through the
stage's fence."""

from __future__ import annotations

from django.utils import timezone

from memos.models import AgentStep
from memos.pipeline.cards import publish_step
from memos.pipeline.claims import fenced_update, fenced_write
from memos.pipeline.context import StageContext


def skip_steps(ctx: StageContext, stage: str, keys: list[str], reason: str) -> None:
    if not keys:
        return
    if stage == ctx.hold.stage:
        _skip_here(ctx, keys, reason)
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


def _skip_here(ctx: StageContext, keys: list[str], reason: str) -> None:
    """Steps of the stage at hand: the context holds them, so one fenced UPDATE, and cards drawn from them."""
    done = (AgentStep.Status.DONE, AgentStep.Status.SKIPPED)
    steps = [step for key in keys if (step := ctx.planned_step(key)) is not None and step.status not in done]
    if not steps:
        return
    now = timezone.now()
    ctx.settle()
    rows = AgentStep.objects.filter(pk__in=[step.pk for step in steps])
    fields = {"status": AgentStep.Status.SKIPPED, "summary": reason, "finished_at": now}
    fenced_update(ctx.hold, rows, "skipping the steps not needed", **fields)
    for step in steps:
        step.status, step.summary, step.finished_at = AgentStep.Status.SKIPPED, reason, now
        publish_step(step)
