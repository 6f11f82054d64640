"""Moves debated by whichever worker is free: the sandbox as shards (seed 003's tier 1, across processes and
machines that share the PostgreSQL and the Redis).

Each debated move is claimed by one worker at a time, in PostgreSQL: a conditional UPDATE that takes a move
nobody holds (or whose holder's heartbeat went stale, a killed worker) and increments its ``lease``. Every
turn the worker writes is checked against that lease in the same transaction (``MoveHold.write``), so a
worker presumed dead cannot write over its successor, and while the run is not running nothing is written
at all. A background thread stamps each held move's heartbeat.

The stage's holder enqueues one RQ job per move (``debate_move``); any worker that frees up takes one and
debates that move unless someone already has it. The holder debates moves itself meanwhile, at most
``AGENCY_MOVES_PER_WORKER`` at once, takes over moves whose worker died, and ends the stage once every move
has its final scores (memos.pipeline.agency.sandbox).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypeVar

import django_rq
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from rq import get_current_job

from memos.models import Move, Run
from memos.pipeline.agency.plan import SANDBOX
from memos.pipeline.dbretry import retry_on_lost_connection
from memos.pipeline.errors import LeaseLost

log = logging.getLogger(__name__)
T = TypeVar("T")
QUEUE = "default"


@dataclass
class MoveHold:
    """This worker's claim on one move's debate."""

    move: Move
    lease: int
    worker: str = ""  # who holds it (shard_worker), stamped on every turn it writes
    lost: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        """Stop before another call for a move that is no longer this worker's."""
        if self.lost.is_set():
            raise LeaseLost(
                f"move {self.move.move_id} of run {self.move.run_id}: lease {self.lease} was lost"
            )

    def write(self, action: Callable[[], T], *, what: str) -> T:
        """``action`` in a transaction that holds the move row while its lease is ours and the run runs."""

        def attempt() -> T:
            self.check()
            with transaction.atomic():
                held = (
                    Move.objects.select_for_update(no_key=True)
                    .filter(pk=self.move.pk, lease=self.lease, run__status=Run.Status.RUNNING)
                    .values_list("pk", flat=True)
                )
                if not list(held):
                    self.lost.set()
                    raise LeaseLost(f"{what}: the move's lease {self.lease} is no longer current")
                return action()

        return retry_on_lost_connection(attempt, what=what)

    def release(self) -> None:
        """Give the move back (its debate hit an error another attempt may get past)."""
        Move.objects.filter(pk=self.move.pk, lease=self.lease).update(worker="", heartbeat_at=None)

    def debated(self) -> None:
        self.write(
            lambda: Move.objects.filter(pk=self.move.pk).update(debated_at=timezone.now()),
            what="ending a debate",
        )

    def failed(self, reason: str) -> None:
        self.write(
            lambda: Move.objects.filter(pk=self.move.pk).update(failure=reason[:2000]), what="a failure"
        )


def shard_worker() -> str:
    """Who debates: host and process of the RQ worker (a job runs in a work-horse forked for it, whose
    parent is the worker), or of this process outside a worker (``--inline``). Asked in the job's own
    thread: RQ knows the current job only there."""
    pid = os.getppid() if get_current_job() is not None else os.getpid()
    return f"{socket.gethostname()}:{pid}"


def stale_before() -> timedelta:
    return timedelta(seconds=int(settings.RUN_STALE_AFTER_S))


def open_moves(run_id: str) -> Q:
    """Moves of the run still to debate: neither merged, nor debated, nor failed."""
    return Q(run_id=run_id, merged_into="", debated_at__isnull=True, failure="")


def claimable(run_id: str) -> list[Move]:
    """Open moves nobody holds, or whose holder went quiet, in the order proposed."""
    quiet = timezone.now() - stale_before()
    rows = Move.objects.filter(open_moves(run_id)).filter(Q(worker="") | Q(heartbeat_at__lt=quiet))
    return list(rows.order_by("number"))


def claim(move: Move, worker: str) -> MoveHold | None:
    """Take ``move`` for ``worker`` if it is still open and free (or its holder went quiet); None if someone
    has it."""
    now = timezone.now()
    taken = (
        Move.objects.filter(
            open_moves(str(move.run_id)), pk=move.pk, run__status=Run.Status.RUNNING, run__stage=SANDBOX
        )
        .filter(Q(worker="") | Q(heartbeat_at__lt=now - stale_before()))
        .update(worker=worker, lease=F("lease") + 1, heartbeat_at=now)
    )
    if not taken:
        return None
    move.refresh_from_db(fields=["worker", "lease", "heartbeat_at"])
    return MoveHold(move=move, lease=move.lease, worker=worker)


class MoveBeat:
    """Stamps the heartbeat of every move this process holds, every ``RUN_HEARTBEAT_S``; a move whose lease
    moved on (another worker took it over) is marked lost, and its debate stops before its next call."""

    def __init__(self) -> None:
        self._holds: set[int] = set()
        self._by_id: dict[int, MoveHold] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="move-heartbeat", daemon=True)
        self._thread.start()

    def add(self, hold: MoveHold) -> None:
        with self._lock:
            self._by_id[id(hold)] = hold

    def remove(self, hold: MoveHold) -> None:
        with self._lock:
            self._by_id.pop(id(hold), None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(float(settings.RUN_HEARTBEAT_S)):
                with self._lock:
                    holds = list(self._by_id.values())
                for hold in holds:
                    try:
                        stamped = Move.objects.filter(pk=hold.move.pk, lease=hold.lease).update(
                            heartbeat_at=timezone.now()
                        )
                    except DatabaseError as exc:
                        log.warning(
                            "move %s: heartbeat could not reach the database: %s", hold.move.move_id, exc
                        )
                        connection.close()
                        continue
                    if not stamped:
                        hold.lost.set()
        finally:
            connection.close()


def enqueue_debates(run_id: str, moves: list[str]) -> None:
    """One job per move for any worker that frees up (a job for a move someone has ends at once)."""
    queue = django_rq.get_queue(QUEUE)
    for move_id in moves:
        queue.enqueue(
            "memos.pipeline.agency.sandbox.debate_move",
            run_id,
            move_id,
            description=f"run {run_id[:8]}: debate {move_id}",
        )
