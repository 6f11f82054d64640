"""Sub-steps of a stage that whichever worker is free takes: rows of a stage's work (the agency's moves, one
debate each) held by one worker at a time, across the processes and machines that share the PostgreSQL.

A stage is held by one worker (memos.pipeline.claims); its sub-steps spread across many, with the same four
parts on a row of the workflow's own table (memos.models.substeps.ClaimedSubStep):

- a claim takes a row nobody holds, or whose holder's heartbeat went quiet (a kill -9), and increments its
  ``lease``, the fencing token, in one transaction that also records the worker and stamps the heartbeat;
- every write under the claim checks that lease, and that the run is still running, in the transaction of
  the write (``SubStepHold.write``), so a worker presumed dead cannot write over its successor;
- one thread per process (``Heartbeats``) stamps every row the process holds and marks a hold lost once
  another worker has taken its row over, so the work stops before its next call;
- ``release`` gives a row back for another attempt.

No Redis lock in front, unlike a stage's claim: a refused claim costs one query, and PostgreSQL has the last
word either way. The stage's holder enqueues one job per row (``SubSteps.enqueue``) for the workers that
free up, and works on rows itself meanwhile.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import django_rq
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone
from rq import get_current_job

from memos.models import Run
from memos.models.substeps import ClaimedSubStep
from memos.pipeline.dbretry import retry_on_lost_connection
from memos.pipeline.errors import LeaseLost

log = logging.getLogger(__name__)
S = TypeVar("S", bound=ClaimedSubStep)
T = TypeVar("T")
M = TypeVar("M", bound=Model)
QUEUE = "default"


def holder_name() -> str:
    """Who takes sub-steps: host and process of the RQ worker (a job runs in a work-horse forked for it, whose
    parent is the worker), or of this process outside a worker (``--inline``). Asked in the job's own
    thread: RQ knows the current job only there."""
    pid = os.getppid() if get_current_job() is not None else os.getpid()
    return f"{socket.gethostname()}:{pid}"


def quiet_after() -> timedelta:
    """How long a holder's heartbeat may be silent before its row is anyone's: the stages' own bound."""
    return timedelta(seconds=int(settings.RUN_STALE_AFTER_S))


def free_at(now: datetime) -> Q:
    """Rows nobody holds, or whose holder went quiet."""
    return Q(worker="") | Q(heartbeat_at__lt=now - quiet_after())


@dataclass
class SubStepHold(Generic[S]):
    """This worker's claim on one sub-step: its row, and the lease it was claimed with."""

    row: S
    lease: int
    worker: str = ""  # who holds it (holder_name), for the rows its work writes to say so
    lost: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        """Stop before another call for a row that is no longer this worker's."""
        if self.lost.is_set():
            raise LeaseLost(f"{self.name}: lease {self.lease} was lost")

    def write(self, action: Callable[[], T], *, what: str) -> T:
        """``action`` in a transaction that locks the row while its lease is ours and the run runs: a
        takeover (an UPDATE of the row) waits for it, and once that has committed the write is refused."""

        def attempt() -> T:
            self.check()
            with transaction.atomic():
                held = self._held_row().select_for_update(no_key=True).values_list("pk", flat=True)
                if not list(held):
                    self.lost.set()
                    raise LeaseLost(f"{what}: {self.name}'s lease {self.lease} is no longer current")
                return action()

        return retry_on_lost_connection(attempt, what=what)

    def insert_once(self, model: type[M], slot: dict[str, Any], fields: dict[str, Any], *, what: str) -> M:
        """One row of ``model`` for ``slot`` (the columns of one of its unique constraints), inserted only
        while the lease is ours and the run runs, in one statement: the condition takes a share lock on this
        row where the lease still matches, so a takeover (an UPDATE of it) waits for the insert, and once it
        has committed the insert is refused. A row already written for the slot (a call answered twice
        around a takeover) is read back, never doubled. One round trip where a transaction, a locking read
        and an ORM insert took four: a debate writes a row per call."""
        self.check()
        row = model(**slot, **fields)
        inserted = retry_on_lost_connection(lambda: _insert_held(self, row), what=what)
        if inserted:
            return row
        if not self._still_held():
            self.lost.set()
            raise LeaseLost(f"{what}: {self.name}'s lease {self.lease} is no longer current")
        found: M | None = model._default_manager.filter(**slot).first()
        if found is None:  # another of the table's unique constraints: a row refused for its data
            raise IntegrityError(f"{what}: the row conflicts with one already stored")
        return found

    def _still_held(self) -> bool:
        return bool(retry_on_lost_connection(self._held_row().exists, what=f"checking {self.name}'s lease"))

    def _held_row(self) -> QuerySet[S]:
        """The row, while its lease is this hold's and its run runs (empty otherwise)."""
        rows: QuerySet[S] = type(self.row)._default_manager.filter(
            pk=self.row.pk, lease=self.lease, run__status=Run.Status.RUNNING
        )
        return rows

    def stamp(self) -> bool:
        """The heartbeat, if the lease is still ours; False once another worker has taken the row over."""
        rows = type(self.row)._default_manager
        return bool(rows.filter(pk=self.row.pk, lease=self.lease).update(heartbeat_at=timezone.now()))

    def release(self) -> None:
        """Give the row back (its work hit an error another attempt may get past); nothing if it was taken
        over meanwhile."""
        rows = type(self.row)._default_manager
        rows.filter(pk=self.row.pk, lease=self.lease).update(worker="", heartbeat_at=None)

    @property
    def name(self) -> str:
        return f"{type(self.row).__name__.lower()} {self.row.pk} of run {self.row.run_id}"


def _insert_held(hold: SubStepHold[Any], row: Model) -> bool:
    """INSERT ``row`` if ``hold`` still holds its sub-step and the run runs; whether it was inserted (not:
    the lease moved on, the run ended, or the slot's row exists). Sets the row's primary key."""
    quote = connection.ops.quote_name
    meta, held = type(row)._meta, type(hold.row)._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(row, add=True), connection) for f in fields]
    columns = ", ".join(quote(f.column or f.attname) for f in fields)
    runs, table = quote(Run._meta.db_table), quote(held.db_table)
    # Our own table and column names; every value is a parameter.
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {', '.join(['%s'] * len(fields))} "  # noqa: S608
        f"WHERE EXISTS (SELECT 1 FROM {table} JOIN {runs} ON {runs}.id = {table}.run_id "
        f"WHERE {table}.id = %s AND {table}.lease = %s AND {runs}.status = %s FOR SHARE OF {table}) "
        f"ON CONFLICT DO NOTHING RETURNING {quote('id')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, hold.row.pk, hold.lease, Run.Status.RUNNING])
        returned = cursor.fetchone()
    if returned is None:
        return False
    row.pk = returned[0]
    row._state.adding, row._state.db = False, connection.alias
    return True


@dataclass(frozen=True)
class SubSteps(Generic[S]):
    """One kind of sub-step, as a workflow declares it: the rows, the stage they belong to, and the job that
    takes one."""

    model: type[S]
    stage: str  # rows are claimed only while their run is running at this stage
    key: str  # the field that names a row within its run, the job's second argument ("move_id")
    unfinished: Q  # the rows still to do, on the row's own columns
    job: str  # the RQ job, by its dotted path: called with the run's id and a row's key
    what: str  # the job's description names it so: "run 1a2b3c4d: debate m3"

    def rows(self, run_id: str) -> QuerySet[S]:
        """The run's rows still to do, in the model's order."""
        return self.model._default_manager.filter(self.unfinished, run_id=run_id)

    def claimable(self, run_id: str) -> list[S]:
        """The rows still to do that nobody holds, or whose holder went quiet."""
        return list(self.rows(run_id).filter(free_at(timezone.now())))

    def claim(self, row: S, *, worker: str) -> SubStepHold[S] | None:
        """Take ``row`` for ``worker`` if it is still to do, free (or its holder went quiet) and its run is
        running at the stage; None if someone has it."""
        now = timezone.now()
        with transaction.atomic():
            # Lock the row only where it is free, then take it. A second claimer that queued behind the lock
            # reads the row again once the first commits, finds it held and gets nothing. (One UPDATE whose
            # conditions join the run is written by Django as ``id IN (SELECT ... JOIN ...)``, which
            # PostgreSQL does not read again: both claimers won, tested in tests/memos/engine.)
            free = (
                self.rows(str(row.run_id))
                .select_for_update(of=("self",), no_key=True)
                .filter(free_at(now), pk=row.pk, run__status=Run.Status.RUNNING, run__stage=self.stage)
                .values_list("lease", flat=True)
            )
            lease = next(iter(free), None)
            if lease is None:
                return None
            taken = self.model._default_manager.filter(pk=row.pk)
            taken.update(worker=worker, lease=F("lease") + 1, heartbeat_at=now)
        row.worker, row.lease, row.heartbeat_at = worker, lease + 1, now
        return SubStepHold(row=row, lease=lease + 1, worker=worker)

    def take(self, run_id: str, key: str, *, worker: str) -> SubStepHold[S] | None:
        """The job's first move: claim the run's row named ``key``; None when there is nothing to do (the
        row is done or held, or the run is no longer at the stage)."""
        row = self.rows(run_id).filter(**{self.key: key}).first()
        return None if row is None else self.claim(row, worker=worker)

    def enqueue(self, run_id: str, keys: Iterable[str]) -> None:
        """One job per row for any worker that frees up; a job for a row someone has ends at once."""
        queue = django_rq.get_queue(QUEUE)
        for key in keys:
            queue.enqueue(self.job, run_id, key, description=f"run {run_id[:8]}: {self.what} {key}")


class Heartbeats:
    """Stamps the heartbeat of every sub-step this process holds, every ``RUN_HEARTBEAT_S``, from one thread.

    A hold whose lease moved on (another worker took its row over) is marked lost, and its work stops before
    its next call or write. A database error is logged and the next beat tries again, as a stage's heartbeat
    does (memos.pipeline.liveness.Heartbeat): an outage shorter than ``RUN_STALE_AFTER_S`` must not hand a
    live sub-step to another worker.
    """

    def __init__(self) -> None:
        self._holds: dict[int, SubStepHold[Any]] = {}  # any kind of sub-step: the beat reads its base columns
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="sub-step-heartbeat", daemon=True)
        self._thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def add(self, hold: SubStepHold[S]) -> None:
        with self._lock:
            self._holds[id(hold)] = hold

    def remove(self, hold: SubStepHold[S]) -> None:
        with self._lock:
            self._holds.pop(id(hold), None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def beat_once(self) -> None:
        with self._lock:
            holds = list(self._holds.values())
        for hold in holds:
            try:
                if not hold.stamp():
                    hold.lost.set()
            except DatabaseError as exc:
                log.warning("%s: heartbeat could not reach the database: %s", hold.name, exc)
                connection.close()  # this thread's own connection; the next beat opens a new one

    def _beat(self) -> None:
        try:
            while not self._stop.wait(float(settings.RUN_HEARTBEAT_S)):
                self.beat_once()
        finally:
            connection.close()
