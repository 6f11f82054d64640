"""Jobs queued at most once: a job that does the same work whenever it runs (refresh a company's figures,
calibrate the judge on a rubric) has a fixed id, and is not queued again while one of that id still waits.
Otherwise every trigger (each tick, each committee score) would stack another copy behind the first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.queue import Queue

WAITING = (JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED)
AGAIN = "-again"  # RQ job ids are letters, digits, underscores and dashes


def status_of(queue: Queue, job_id: str) -> JobStatus | None:
    try:
        return Job.fetch(job_id, connection=queue.connection).get_status()
    except NoSuchJobError:
        return None


def job_to_queue(queue: Queue, job_id: str, *, again_after_running: bool) -> str | None:
    """The id to queue the work under, or None when a job that will do it is already waiting. While one
    runs: None (``again_after_running`` false: it does the work), or one more after it (true: it read its
    inputs when it started, so what changed since needs another), under the id's ``-again`` twin."""
    status = status_of(queue, job_id)
    if status in WAITING:
        return None
    if status != JobStatus.STARTED:
        return job_id
    if not again_after_running or status_of(queue, job_id + AGAIN) in WAITING:
        return None
    return job_id + AGAIN


def enqueue_once(
    queue: Queue,
    job_id: str,
    work: Callable[..., Any],
    *args: Any,
    description: str,
    again_after_running: bool = False,
) -> bool:
    """Queue ``work(*args)`` under ``job_id`` unless a job that will do it already waits; whether queued."""
    chosen = job_to_queue(queue, job_id, again_after_running=again_after_running)
    if chosen is None:
        return False
    queue.enqueue(work, *args, job_id=chosen, description=description)
    return True
