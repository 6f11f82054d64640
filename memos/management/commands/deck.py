"""``manage.py deck TICKER --brief "..." [--profile quick|full] [--wait | --inline] [--out DIR]``.

Creates a brief and starts a deck run (seed 001), printing the run's URL. ``--wait`` follows the RQ worker;
``--inline`` runs every stage in this process. ``--out DIR`` writes the best version's ``deck.json`` (the
spec), ``deck.pptx`` and ``render.pdf``. Exit status 0 when the deck is done, 1 when the run failed or was
escalated (with its reason), 2 for bad input.
"""

from __future__ import annotations

import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from agents.deck.outputs import DeckOutput
from agents.deck.render.embedded import deck_json
from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from memos.management.brief_arguments import add_brief_arguments
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.services.errors import ServiceError
from memos.services.notifications import wait_for_mail
from memos.services.runs import create_brief, start_run

POLL_S = 0.5


class Command(BaseCommand):
    help = "Start a C-suite deck run for a ticker and a brief; print its URL (and wait for it)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        add_brief_arguments(parser, what="deck", default_profile="quick")
        parser.add_argument("--out", type=Path, help="write deck.json, deck.pptx and render.pdf here")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            self._refuse(f"no user {options['user']!r}; run manage.py bootstrap_demo or pass --user")
        out: Path | None = options["out"]
        if out is not None and out.exists() and not out.is_dir():
            self._refuse(f"--out {out} exists and is not a folder")
        try:
            brief = create_brief(
                owner=user,
                ticker=options["ticker"],
                question=options["brief"],
                audience=options["audience"],
                notes=options["notes"],
            )
            run = start_run(
                brief,
                user=user,
                profile=options["profile"],
                workflow=Run.Workflow.DECK,
                enqueue=not options["inline"],
            )
        except ServiceError as exc:
            self._refuse(str(exc))
        self.stdout.write(f"run {run.pk} started: {settings.SITE_URL.rstrip('/')}/runs/{run.pk}/")
        started = time.monotonic()
        if options["inline"]:
            driver.run_inline(str(run.pk))
            wait_for_mail()  # the notices of the version it froze leave before this process does
        elif options["wait"] or out is not None:
            self._follow(run, options["timeout"])
        else:
            return
        run.refresh_from_db()
        self._finish(run, time.monotonic() - started, out)

    def _refuse(self, message: str) -> NoReturn:
        self.stderr.write(f"deck: {message}")
        raise SystemExit(2)

    def _follow(self, run: Run, timeout: float) -> None:
        started, last = time.monotonic(), ""
        while True:
            run.refresh_from_db()
            if run.status_message != last:
                last = run.status_message
                self.stdout.write(f"  {run.stage or '-'}: {last[:100]}")
            if run.status not in Run.ACTIVE_STATUSES:
                return
            if time.monotonic() - started > timeout:
                self.stderr.write(f"deck: gave up waiting after {timeout:.0f} s; the run goes on")
                raise SystemExit(1)
            time.sleep(POLL_S)

    def _finish(self, run: Run, seconds: float, out: Path | None) -> None:
        raw = (
            AgentStep.objects.filter(run=run, kind="deck", status="done")
            .values_list("output", flat=True)
            .first()
        )
        if raw is None:
            self.stderr.write(f"deck: run {run.status}: {run.status_message}")
            raise SystemExit(1)
        output = DeckOutput.model_validate(raw)
        self.stdout.write(f"deck done in {seconds:.1f} s: {run.status_message}")
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "deck.json").write_bytes(deck_json(output.deck))
            (out / "deck.pptx").write_bytes(render_pptx(output.deck))
            (out / "render.pdf").write_bytes(render_pdf(output.deck).pdf)
            self.stdout.write(f"wrote {out / 'deck.json'}, {out / 'deck.pptx'} and {out / 'render.pdf'}")
        if output.escalated:
            raise SystemExit(1)
