"""Claiming a stage of a run, writing under the claim, and every change of the run's state.

A claim is two locks taken in order: the run's Redis lock (memos.pipeline.liveness.RunLock), which keeps a
second worker away, then a conditional UPDATE of the run in PostgreSQL that increments its ``lease`` (the
fencing token) and its ``stage_attempts``. Every later write of the stage holds a lock on the run row
where ``lease`` still equals the claimed token: a one-row write is a single UPDATE whose condition share-locks
that row (``fenced_update``, one round trip on the hot path of every step), a write of several rows is a
transaction that locks it first (``fenced``). Once another worker has claimed the run, or the run has ended,
the old holder's writes are refused with ``LeaseLost`` instead of landing on top of the new holder's work.
Every status change is such a conditional UPDATE, so a finished or failed run never returns to running.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, F, Model, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.text.storable import storable, storable_text
from memos.models import AgentStep, Run, StageClaim
from memos.pipeline.cards import publish_run
from memos.pipeline.dbretry import retry_on_lost_connection
from memos.pipeline.earlier import EarlierSteps
from memos.pipeline.errors import LeaseLost
from memos.pipeline.liveness import RunLock

T = TypeVar("T")
M = TypeVar("M", bound=Model)
Outcome = StageClaim.Outcome


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Hold:
    """This worker's claim on one stage of one run."""

    run_id: str
    stage: str
    lease: int
    attempt: int  # this claim's number among the claims of this stage (1 for the first)
    claim_pk: int
    lock: RunLock
    lost: threading.Event = field(default_factory=threading.Event)
    run: Run | None = None  # handed over: the run as the hand-over left it, which the next stage goes on with
    earlier: EarlierSteps | None = None  # handed over: the finished steps the next stage need not read again

    def check(self) -> None:
        """Stop before doing more work (an LLM call, a write) for a stage that is no longer ours."""
        if self.lost.is_set():
            raise LeaseLost(f"run {self.run_id}: lease {self.lease} on {self.stage} was lost")


@dataclass(frozen=True)
class Refusal:
    """Why a claim was not made; ``failed`` when the refusal ended the run."""

    reason: str
    failed: bool = False


def max_attempts() -> int:
    return int(settings.RUN_MAX_STAGE_ATTEMPTS)


def claim_stage(run_id: str, stage: str, *, first: bool) -> Hold | Refusal:
    """Claim ``stage`` if the run is waiting for it and nobody else holds it.

    ``first`` says it is the workflow's first stage, which a queued run with no stage yet may start with.
    """
    lock = RunLock(run_id, uuid.uuid4().hex)
    if not lock.acquire():
        return Refusal("another worker holds the run")
    try:
        outcome = retry_on_lost_connection(
            lambda: _claim_in_database(run_id, stage, first=first), what="claiming"
        )
    except BaseException:
        lock.release()
        raise
    if isinstance(outcome, Refusal):
        lock.release()
        return outcome
    lease, attempt, claim_pk = outcome
    return Hold(run_id=run_id, stage=stage, lease=lease, attempt=attempt, claim_pk=claim_pk, lock=lock)


def _claim_in_database(run_id: str, stage: str, *, first: bool) -> tuple[int, int, int] | Refusal:
    waiting_for = [stage, ""] if first else [stage]
    now = timezone.now()
    with transaction.atomic():
        claimed = Run.objects.filter(
            pk=run_id,
            status__in=Run.ACTIVE_STATUSES,
            stage__in=waiting_for,
            stage_attempts__lt=max_attempts(),
        ).update(
            status=Run.Status.RUNNING,
            stage=stage,
            lease=F("lease") + 1,
            stage_attempts=F("stage_attempts") + 1,
            tokens_reserved=0,  # reservations belong to calls of earlier holders, which are all over now
            heartbeat_at=now,
            started_at=Coalesce(F("started_at"), now),
            status_message=f"{stage}…",
        )
        if not claimed:
            return _refusal(run_id, stage)
        run = Run.objects.only("lease", "stage_attempts").get(pk=run_id)
        # Whoever held the run before is gone (its lock expired): its claim and its half-done steps say so.
        StageClaim.objects.filter(run_id=run_id, outcome=Outcome.RUNNING).update(
            outcome=Outcome.ABANDONED, released_at=now
        )
        orphaned = AgentStep.objects.filter(
            run_id=run_id, stage=stage, status=AgentStep.Status.RUNNING
        ).update(status=AgentStep.Status.PENDING)
        claim = StageClaim.objects.create(run_id=run_id, stage=stage, lease=run.lease, worker=worker_name())
        # Every card is redrawn when a resumed stage put some back to pending; the status line is drawn by
        # the driver from the run it reads under the claim.
        if orphaned:
            publish_run(run_id, with_steps=True)
    return run.lease, run.stage_attempts, claim.pk


def _refusal(run_id: str, stage: str) -> Refusal:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return Refusal("no such run")
    if not run.is_active:
        return Refusal(f"the run is {run.status}")
    if run.stage != stage and not (run.stage == "" and stage == ""):
        return Refusal(f"the run is at {run.stage or 'its start'}, not {stage}")
    if run.stage_attempts >= max_attempts():
        last = (
            StageClaim.objects.filter(run_id=run_id, stage=stage).exclude(error="").order_by("-lease").first()
        )
        why = f"; the last error: {storable_text(last.error)}" if last is not None else ""
        message = f"the {stage} stage was started {run.stage_attempts} times and never finished{why}"
        ended = Run.objects.filter(pk=run_id, status__in=Run.ACTIVE_STATUSES, lease=run.lease).update(
            status=Run.Status.FAILED, finished_at=timezone.now(), status_message=message
        )
        if ended:
            _close_steps(run_id, message)
            publish_run(run_id, with_steps=True)
            return Refusal(message, failed=True)
    return Refusal("the run changed meanwhile")


@contextmanager
def fenced(hold: Hold) -> Iterator[None]:
    """A transaction in which the stage still holds the run: the run row is locked for its duration, so a
    claim by another worker waits until it commits and every write after that claim is refused."""
    hold.check()
    with transaction.atomic():
        held = list(
            Run.objects.select_for_update(no_key=True)
            .filter(pk=hold.run_id, lease=hold.lease, status=Run.Status.RUNNING)
            .values_list("pk", flat=True)
        )
        if not held:
            hold.lost.set()
            raise LeaseLost(f"run {hold.run_id}: lease {hold.lease} on {hold.stage} is no longer current")
        yield


def fenced_write(hold: Hold, action: Callable[[], T], *, what: str) -> T:
    """``action`` in a fenced transaction, retried if the database connection is lost meanwhile."""

    def attempt() -> T:
        with fenced(hold):
            return action()

    return retry_on_lost_connection(attempt, what=what)


_HELD_FOR_SHARE = "EXISTS (SELECT 1 FROM memos_run WHERE id = %s AND lease = %s AND status = %s FOR SHARE)"


def fenced_update(hold: Hold, rows: QuerySet[M], what: str, **values: Any) -> None:
    """UPDATE ``rows`` in one statement that lands only while the stage still holds the run.

    The condition takes a share lock on the run row where the lease is still ours: a claim by another
    worker (an UPDATE of that row) waits for the statement, and once it has committed, the statement
    matches nothing and the write is refused. Parallel steps of one stage share the lock and do not wait
    for each other. ``rows`` must match at least one row.
    """
    hold.check()
    # Constant SQL, values as parameters: Django's ORM has no locking clause inside a subquery.
    held = RawSQL(  # noqa: S611
        _HELD_FOR_SHARE, (uuid.UUID(hold.run_id), hold.lease, Run.Status.RUNNING), output_field=BooleanField()
    )
    updated = retry_on_lost_connection(lambda: rows.filter(held).update(**values), what=what)
    if not updated:
        hold.lost.set()
        raise LeaseLost(f"run {hold.run_id}: lease {hold.lease} on {hold.stage} is no longer current")


def stamp_heartbeat(run_id: str, lease: int) -> bool:
    """The heartbeat, if the lease is still ours; False when it is not (moved on, or the run ended)."""
    return bool(
        Run.objects.filter(pk=run_id, lease=lease, status=Run.Status.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


def write_fields(hold: Hold, **fields: Any) -> None:
    """Fields of the run (a data version, a message) written by its holder; the caller redraws its status.
    A message may quote a model or a file: it is stored as PostgreSQL takes it."""
    fenced_update(hold, Run.objects.filter(pk=hold.run_id), "updating the run", **storable(fields))


def set_fields(hold: Hold, **fields: Any) -> None:
    """``write_fields``, then the run's status line drawn from the row as it is now."""
    write_fields(hold, **fields)
    publish_run(hold.run_id)


def hand_over(hold: Hold, following: str, run: Run) -> Hold:
    """The stage is done and this worker goes straight on with ``following``: one statement moves the run
    on (a new lease, as a claim would give), closes this claim and opens the next, under the Redis lock it
    already holds. No queue hop, no second claim; a worker that dies after it leaves the run running at
    ``following`` with a heartbeat that goes stale, which the watchdog resumes like any other.

    ``run`` (the stage's, read with its brief and company) is brought up to date from the statement's own
    result, and the next stage starts from it without reading the run again: nobody else writes a run whose
    lease this worker holds."""
    now = timezone.now()
    message = f"{following}…"
    params: dict[str, Any] = {
        "run": uuid.UUID(hold.run_id),
        "lease": hold.lease,
        "running": Run.Status.RUNNING,
        "following": following,
        "now": now,
        "message": message,
        "claim": hold.claim_pk,
        "finished": Outcome.FINISHED,
        "claim_running": Outcome.RUNNING,
        "worker": worker_name(),
    }

    def write() -> tuple[int, int] | None:
        with connection.cursor() as cursor:
            cursor.execute(_hand_over_sql(), params)
            row = cursor.fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    hold.check()
    moved = retry_on_lost_connection(write, what=f"moving on to {following}")
    if moved is None:
        hold.lost.set()
        raise LeaseLost(f"run {hold.run_id}: lease {hold.lease} on {hold.stage} is no longer current")
    claim_pk, tokens_spent = moved
    run.stage, run.lease, run.stage_attempts, run.tokens_reserved = following, hold.lease + 1, 1, 0
    run.heartbeat_at, run.status_message, run.tokens_spent = now, message, tokens_spent
    # No status line drawn here: the driver draws it when the next stage starts.
    return Hold(
        hold.run_id,
        following,
        lease=hold.lease + 1,
        attempt=1,
        claim_pk=claim_pk,
        lock=hold.lock,
        run=run,
    )


@cache
def _hand_over_sql() -> str:
    """Move the run on if its lease is still the holder's, close the holder's claim, open the next: one
    statement, so no transaction to open and commit between two stages. Returns the new claim and the run's
    tokens, or no row when the lease had moved on."""
    runs, claims = (connection.ops.quote_name(m._meta.db_table) for m in (Run, StageClaim))
    # Our own tables' names; every value is a parameter.
    return (
        f"WITH moved AS (UPDATE {runs} SET stage = %(following)s, lease = lease + 1, "  # noqa: S608
        "stage_attempts = 1, tokens_reserved = 0, heartbeat_at = %(now)s, status_message = %(message)s "
        "WHERE id = %(run)s AND lease = %(lease)s AND status = %(running)s "
        "RETURNING id, lease, tokens_spent), "
        f"closed AS (UPDATE {claims} SET outcome = %(finished)s, released_at = %(now)s "
        "WHERE id = %(claim)s AND EXISTS (SELECT 1 FROM moved)) "
        f"INSERT INTO {claims} (run_id, stage, lease, worker, claimed_at, outcome, error) "
        "SELECT id, %(following)s, lease, %(worker)s, %(now)s, %(claim_running)s, '' FROM moved "
        "RETURNING id, (SELECT tokens_spent FROM moved)"
    )


def finish(hold: Hold, status: str, message: str, *, also: Callable[[], object] | None = None) -> None:
    """End the run with ``status``; ``also`` (freezing its artefact) commits with it or not at all, so a
    run is never finished without its version."""
    message = storable_text(message)
    if also is None:
        set_fields(hold, status=status, finished_at=timezone.now(), status_message=message)
        return

    def write() -> None:
        Run.objects.filter(pk=hold.run_id).update(
            status=status, finished_at=timezone.now(), status_message=message
        )
        also()
        publish_run(hold.run_id)

    fenced_write(hold, write, what="finishing the run")


def fail(hold: Hold, message: str) -> None:
    message = storable_text(message)

    def write() -> None:
        Run.objects.filter(pk=hold.run_id).update(
            status=Run.Status.FAILED, finished_at=timezone.now(), status_message=message
        )
        _close_steps(hold.run_id, message)
        publish_run(hold.run_id, with_steps=True)

    fenced_write(hold, write, what="failing the run")


def resume_later(hold: Hold, message: str) -> None:
    """The stage hit an error that another attempt may not: the watchdog's next pass resumes it."""
    set_fields(hold, heartbeat_at=None, status_message=message)


def release(hold: Hold, outcome: str, error: str = "") -> None:
    """Close this claim's row and give the Redis lock back."""
    try:
        retry_on_lost_connection(
            lambda: StageClaim.objects.filter(pk=hold.claim_pk, outcome=Outcome.RUNNING).update(
                outcome=outcome, released_at=timezone.now(), error=storable_text(error)[:2000]
            ),
            what="closing the claim",
        )
    finally:
        hold.lock.release()


def _close_steps(run_id: str, message: str) -> None:
    AgentStep.objects.filter(run_id=run_id, status=AgentStep.Status.RUNNING).update(
        status=AgentStep.Status.FAILED, error=message, finished_at=timezone.now()
    )
    # What the failure kept from running is shown as skipped, not left waiting for ever.
    AgentStep.objects.filter(run_id=run_id, status=AgentStep.Status.PENDING).update(
        status=AgentStep.Status.SKIPPED
    )
