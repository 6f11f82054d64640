"""``manage.py watchdog [--every S]``: re-enqueue runs whose worker died (stale heartbeat), have the
notice e-mails that are due sent (a mail server that was down, a refused e-mail's next attempt, a sender that
died mid-way), and the PDFs printed that a killed worker left pending (memos.services.version_files).

RQ alone notices a dead work-horse only late and never re-runs the job; ``scripts/run.sh`` starts this loop
beside the worker. The e-mails go on this process's sender thread, which each pass only wakes
(memos.services.notifications.sweep_in_background): a mail server that never answers holds up that thread,
never the resumption of runs. ``--once`` checks one time, then sends what is due and exits.
"""

from __future__ import annotations

import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.db import DatabaseError, close_old_connections
from redis.exceptions import RedisError

from memos.pipeline.watchdog import resume_stale_runs
from memos.services import notifications, version_files


class Command(BaseCommand):
    help = "Re-enqueue the current stage of running runs whose heartbeat went stale; send the e-mails due."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--every", type=float, default=15.0, help="seconds between checks")
        parser.add_argument("--once", action="store_true")
        parser.add_argument("--stale-after", type=int, help="seconds (default RUN_STALE_AFTER_S)")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            try:
                for run_id in resume_stale_runs(stale_after_s=options["stale_after"]):
                    self.stdout.write(f"resumed run {run_id}")
                # Nothing waits behind a single check: the e-mails due go now, in this thread.
                if options["once"] and (sent := notifications.deliver_pending()):
                    self.stdout.write(f"sent {sent} notice e-mail(s) left pending")
                # A version's PDF its worker was killed before printing: printed here (on this process's
                # printer thread, so a long print never holds up the next pass).
                if printed := version_files.print_left_behind(now=options["once"]):
                    self.stdout.write(f"printing the PDFs of {printed} version(s) left pending")
            except (RedisError, DatabaseError) as exc:
                # Redis or PostgreSQL restarting: the stale runs are still stale on the next pass.
                self.stderr.write(f"watchdog: this pass failed ({exc}); retrying in {options['every']:.0f} s")
            close_old_connections()
            if options["once"]:
                return
            notifications.sweep_in_background()
            time.sleep(options["every"])
