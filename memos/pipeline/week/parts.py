"""The runs a week starts as its parts (``Run.part_of``): found again after a restart instead of started
twice, run to their end in the week's own process through the engine, charged to the week's budget, and
read back as ``Part``s.

A part is started unqueued and run here, by the week's worker, so the week needs no second worker and a
person's worker is never taken by it. After a killed worker the watchdog resumes the week's stage and may
queue a part's stage as well: whichever worker claims the part runs it (memos.pipeline.claims), and the week
waits until it ends. The ledger answers every call a part had already made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.db.models import Count, Q, Sum

from agents.week.outputs import Part
from memos.models import LLMCall, Run
from memos.pipeline.composition import WeekPart
from memos.pipeline.context import StageContext
from memos.pipeline.hooks import hooks
from memos.pipeline.judge_families import badges

# How long the week waits before looking at a part again that another worker holds, or whose stage asked
# to be resumed later.
POLL_S = 3.0


PartT = TypeVar("PartT", bound=WeekPart)


def played(kind: type[PartT]) -> tuple[str, PartT] | None:
    """The workflow that plays ``kind`` in the week, and how (its surface's, through the engine's hooks)."""
    found = hooks().week_part(kind)
    if found is None:
        return None
    name, part = found
    if not isinstance(part, kind):
        raise TypeError(f"the {name} workflow's week part is not a {kind.__name__}")
    return name, part


def existing(week: Run, workflow: str, match: Callable[[Run], bool] = lambda run: True) -> Run | None:
    """The week's part of ``workflow`` that ``match`` picks, if the week started one before (its newest)."""
    for run in Run.objects.filter(part_of=week, workflow=workflow).select_related("brief__company"):
        if match(run):
            return run
    return None


def charge(week: Run, part: Run, *, sharing: int = 1) -> None:
    """Cap ``part``'s token budget at its share of what the week has left: every run of the week is charged
    to the week's budget (``sharing`` parts started together split what is left)."""
    if week.budget_tokens is None:
        return
    spent = Run.objects.filter(part_of=week).exclude(pk=part.pk).aggregate(s=Sum("tokens_spent"))["s"] or 0
    share = max(0, week.budget_tokens - spent) // max(1, sharing)
    if part.budget_tokens is None or part.budget_tokens > share:
        Run.objects.filter(pk=part.pk, status=Run.Status.QUEUED).update(budget_tokens=share)


def run_to_end(ctx: StageContext, run_id: str) -> Run:
    """Run the part through the engine until it ends, in this process; wait while another worker holds it."""
    # The engine's driver loads the registry, which loads this workflow: read when a week runs, not before.
    from memos.pipeline import driver
    from memos.pipeline.registry import workflow_for

    while True:
        ctx.check()  # the week's own stage is still this worker's
        run = Run.objects.get(pk=run_id)
        if not run.is_active:
            return run
        stage = run.stage or workflow_for(run.workflow).first_stage
        driver.execute_stage(run_id, stage)
        if Run.objects.filter(pk=run_id, status__in=Run.ACTIVE_STATUSES).exists():
            time.sleep(POLL_S)


def read(run: Run) -> Part:
    """The part as it stands: its status, what it froze, its calls and tokens, its wall time."""
    run.refresh_from_db()
    version = run.versions.order_by("-number").first()
    calls = LLMCall.objects.filter(run=run).aggregate(
        calls=Count("pk"), paid=Count("pk", filter=~Q(outcome=LLMCall.Outcome.CACHED))
    )
    wall = (
        (run.finished_at - run.started_at).total_seconds()
        if run.finished_at is not None and run.started_at is not None
        else None
    )
    return Part(
        workflow=run.workflow,
        run_id=str(run.pk),
        status=run.status,
        message=run.status_message,
        version_id=version.pk if version is not None else None,
        version_label=version.named if version is not None else "",
        partial=bool(version.unfinished) if version is not None else False,
        badges=badges(version.verdict_families if version is not None else run.verdict_families),
        calls=calls["calls"] or 0,
        paid_calls=calls["paid"] or 0,
        tokens=run.tokens_spent,
        wall_s=round(wall, 1) if wall is not None else None,
    )
