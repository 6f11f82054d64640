"""``manage.py analyze TICKER --brief "..." [--profile quick|full] [--wait | --inline]``.

Creates a brief and starts a run, printing the run's URL. ``--wait`` follows the RQ worker's progress with a
progress bar; ``--inline`` runs every stage in this process (no worker needed). Exit status 0 when the memo
is done, 1 when the run failed (with its reason), 2 for bad input.
"""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from agents.memo.outputs import MemoOutput
from memos.management.brief_arguments import add_brief_arguments
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.services.errors import ServiceError
from memos.services.notifications import wait_for_mail
from memos.services.runs import create_brief, start_run

BAR_WIDTH = 30
POLL_S = 0.5


class Command(BaseCommand):
    help = "Start an investment-memo run for a ticker and a brief; print its URL (and wait for it)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        add_brief_arguments(parser, what="memo", default_profile="full")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            self._refuse(f"no user {options['user']!r}; run manage.py bootstrap_demo or pass --user")
        try:
            brief = create_brief(
                owner=user,
                ticker=options["ticker"],
                question=options["brief"],
                audience=options["audience"],
                notes=options["notes"],
            )
            run = start_run(brief, user=user, profile=options["profile"], enqueue=not options["inline"])
        except ServiceError as exc:
            self._refuse(str(exc))
        self.stdout.write(f"run {run.pk} started: {settings.SITE_URL.rstrip('/')}/runs/{run.pk}/")
        if options["inline"]:
            started = time.monotonic()
            driver.run_inline(str(run.pk))
            self._finish(Run.objects.get(pk=run.pk), time.monotonic() - started)
            wait_for_mail()  # the notices of the version it froze leave before this process does
        elif options["wait"]:
            self._follow(run, options["timeout"])

    def _refuse(self, message: str) -> NoReturn:
        self.stderr.write(f"analyze: {message}")
        raise SystemExit(2)

    def _follow(self, run: Run, timeout: float) -> None:
        started = time.monotonic()
        last = ""
        while True:
            run.refresh_from_db()
            last = self._draw(run, last)
            if run.status not in Run.ACTIVE_STATUSES:
                break
            if time.monotonic() - started > timeout:
                self.stderr.write(f"\nanalyze: gave up waiting after {timeout:.0f} s; the run goes on")
                raise SystemExit(1)
            time.sleep(POLL_S)
        self._finish(run, time.monotonic() - started)

    def _draw(self, run: Run, last: str) -> str:
        """Redraw the bar in place on a terminal; elsewhere (a log) print a line only when it changes."""
        counts = AgentStep.objects.filter(run=run)
        total = counts.count() or 1
        done = counts.filter(status__in=[AgentStep.Status.DONE, AgentStep.Status.SKIPPED]).count()
        filled = round(BAR_WIDTH * done / total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        line = f"[{bar}] {done}/{total} steps  {run.status_message[:50]:<50}"
        if sys.stdout.isatty():
            self.stdout.write(f"\r{line}", ending="")
        elif line != last:
            self.stdout.write(line.rstrip())
        return line

    def _finish(self, run: Run, seconds: float) -> None:
        self.stdout.write("")
        if run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW):
            memo = MemoOutput.model_validate(AgentStep.objects.get(run=run, kind="memo").output)
            decision = memo.firewall
            self.stdout.write(
                f"memo done in {seconds:.1f} s: recommendation {decision.final}"
                f"{' (conditional)' if decision.conditional else ''}"
                f" (stated {decision.stated}); evaluator verdict "
                f"{memo.verdict.decision if memo.verdict is not None else 'none: not evaluated'}"
            )
            if run.status == Run.Status.NEEDS_REVIEW:
                self.stdout.write(f"needs review: {run.status_message}")
            return
        self.stderr.write(f"analyze: run {run.status}: {run.status_message}")
        raise SystemExit(1)
