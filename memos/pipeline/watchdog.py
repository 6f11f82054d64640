"""The watchdog: re-enqueue the current stage of runs nobody is working on (``manage.py watchdog``).

RQ alone notices a dead work-horse only late and never re-runs its job, and Redis keeps no queue across a
restart; run state lives in PostgreSQL, so this pass finds what needs a worker there:
- a running run whose heartbeat went stale (its worker died) or was cleared (its stage hit an error and
  asked to be resumed);
- a queued run no worker picked up for as long whose job is no longer in the queue (lost with a Redis
  restart); one whose job is still there is waiting for a free worker (every worker holds a run), not lost.
It only enqueues: the claim decides (memos.pipeline.claims), so a job enqueued twice is harmless, and a
stage that keeps failing ends the run after ``RUN_MAX_STAGE_ATTEMPTS`` claims instead of coming back for ever.
"""

from __future__ import annotations

from datetime import timedelta

import django_rq
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import RedisError

from memos.models import Run
from memos.pipeline import driver
from memos.pipeline.cards import publish_run
from memos.pipeline.registry import workflow_for


def resume_stale_runs(*, stale_after_s: int | None = None) -> list[str]:
    limit = stale_after_s if stale_after_s is not None else int(settings.RUN_STALE_AFTER_S)
    now = timezone.now()
    cutoff = now - timedelta(seconds=limit)
    silent = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff)
    stale = Run.objects.filter(
        Q(status=Run.Status.RUNNING) & silent | Q(status=Run.Status.QUEUED, created_at__lt=cutoff) & silent
    )
    resumed = []
    waiting: set[str] | None = None  # the runs the queue holds a job for, read once a queued run is stale
    for run in stale:
        if run.status == Run.Status.QUEUED:
            waiting = _queued_runs() if waiting is None else waiting
            if str(run.pk) in waiting:
                continue
        stage = run.stage or workflow_for(run.workflow).first_stage
        why = "a lost worker" if run.status == Run.Status.RUNNING else "a lost queue entry"
        # Only if nothing changed since it was read: a worker that stamped meanwhile keeps its run.
        taken = Run.objects.filter(
            pk=run.pk, status=run.status, lease=run.lease, heartbeat_at=run.heartbeat_at
        ).update(heartbeat_at=now, status_message=f"resuming {stage} after {why}")
        if not taken:
            continue
        publish_run(str(run.pk))
        driver.enqueue_stage(str(run.pk), stage)
        resumed.append(str(run.pk))
    return resumed


def _queued_runs() -> set[str]:
    """The runs whose stage job waits in a queue (a person's or the desk's scheduled work's); none when Redis
    cannot be read (then every stale queued run is enqueued again: a job enqueued twice is harmless, one never
    enqueued is a run that never ends)."""
    try:
        jobs = [job for name in driver.QUEUES for job in django_rq.get_queue(name).get_jobs()]
    except RedisError:
        return set()
    return {str(job.args[0]) for job in jobs if job is not None and job.args}
