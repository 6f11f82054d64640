"""``manage.py refine_cycles``: the scheduler's check (memos.services.scheduler): every workflow's runs whose
time has come (a deck brief's refinement cycles, a memo's weekly position, the weekly screen) and, in live
mode, the daily SEC refresh.

``--cron`` runs RQ's own cron scheduler, which queues the check for the worker every ``--every`` seconds
(scripts/run.sh starts this). Without it the check runs here, in a loop, for a machine with no cron process;
``--once`` checks one time and exits.
"""

from __future__ import annotations

import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, close_old_connections
from django.utils import timezone
from django_rq.cron import DjangoCronScheduler
from redis.exceptions import RedisError
from rq.exceptions import StopRequested

from memos.pipeline.driver import QUEUE
from memos.services.scheduler import due, tick

# How often the schedules are checked: a cycle starts at most this long after its time of day.
TICK_SECONDS = 300


def cron_scheduler(*, every: int = TICK_SECONDS) -> DjangoCronScheduler:
    """RQ's cron scheduler with one job, ``tick`` every ``every`` seconds. A tick still queued after ``every``
    seconds (the worker busy with a long stage) is dropped: the next one does the same work."""
    scheduler = DjangoCronScheduler()
    scheduler.register(tick, QUEUE, interval=every, ttl=every, job_timeout=every, name="refine_cycles")
    return scheduler


class Command(BaseCommand):
    help = "Start every scheduled run whose time has come: deck refinement cycles, weekly memos and screens."

    def add_arguments(self, parser: ArgumentParser) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--once", action="store_true", help="check one time and exit")
        mode.add_argument("--cron", action="store_true", help="queue the check for the RQ worker instead")
        parser.add_argument("--every", type=int, default=TICK_SECONDS, help="seconds between checks")

    def handle(self, *args: Any, **options: Any) -> None:
        every: int = options["every"]
        if every < 1:
            raise CommandError("--every must be at least 1 second")
        if options["once"]:
            self._report(due(now=timezone.now()))
            return
        if options["cron"]:
            self._cron(every)
            return
        while True:
            try:
                self._report(due(now=timezone.now()), quiet=True)
            except DatabaseError as exc:
                # PostgreSQL restarting: nothing was recorded, so the next pass acts on the same times of day.
                self.stderr.write(f"refine_cycles: this pass failed ({exc}); retrying in {every} s")
            close_old_connections()
            time.sleep(every)

    def _cron(self, every: int) -> None:
        self.stdout.write(f"queueing the refinement check every {every} s for the worker")
        try:
            while True:
                try:
                    cron_scheduler(every=every).start()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
                    return  # stopped by a signal
                except RedisError as exc:
                    # Redis restarting: run.sh would stop the whole desk if this process exited.
                    self.stderr.write(f"refine_cycles: Redis is unreachable ({exc}); retrying in 10 s")
                    time.sleep(10)
        except StopRequested:
            return  # a signal while waiting for Redis

    def _report(self, lines: list[str], *, quiet: bool = False) -> None:
        for line in lines:
            self.stdout.write(line)
        if not lines and not quiet:
            self.stdout.write(f"{timezone.now():%Y-%m-%d %H:%M} UTC: no refinement cycle is due, nor any run")
