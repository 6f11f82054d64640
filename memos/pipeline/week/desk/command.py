"""``manage.py week [--as-of DATE] [--max-names N] [--inline | --wait] [--timeout S] [--out DIR] [--json]``
(also ``manage.py run week``).

Starts the desk's week: the screen for the latest week the data holds (or ``--as-of``), a quick memo on each
flagged name, the followed decks' cycles, and the digest. ``--json`` prints one object (read by checks, so
its field names hold): ``as_of``, ``status``, ``screen`` (``version``: its URL; ``flags``: RED, YELLOW,
GREEN counts), ``names`` (each ``symbol``, ``flag``, ``alpha_1w``, ``reason``, ``memo``: ``version``,
``recommendation``, ``drift``), ``skipped`` (each ``symbol``, ``reason``), ``digest`` (its URL),
``unfinished`` (each ``step``, ``reason``), ``llm_calls``, ``tokens``, ``wall_s``. ``--out DIR`` writes
``week.json`` and ``digest.md``. Exit 0 when the week is done, 3 when parts did not finish (the digest says
which), 1 when it failed, 2 for bad input.
"""

from __future__ import annotations

import json
import time
from argparse import ArgumentParser
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings
from django.core.management.base import BaseCommand
from django.urls import reverse

from agents.week.outputs import DigestOutput
from memos.models import AgentStep, Run
from memos.pipeline.hooks import hooks
from memos.pipeline.week.digest import sections
from memos.pipeline.week.plan import DIGEST
from memos.services.errors import ServiceError

POLL_S = 1.0
NEEDS_REVIEW_EXIT = 3


def _url(name: str, *args: object) -> str:
    return settings.SITE_URL.rstrip("/") + reverse(name, args=args)


def week_json(run: Run) -> dict[str, Any]:
    """The finished week as ``--json`` prints it, from its digest step (a week with none: what is known)."""
    raw = (
        AgentStep.objects.filter(run=run, stage=DIGEST, key=DIGEST, status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    version = run.versions.order_by("-number").first()
    if raw is None:
        return {
            "as_of": run.config.get("as_of"),
            "status": run.status,
            "screen": None,
            "names": [],
            "skipped": [],
            "digest": None,
            "unfinished": [{"step": "the week", "reason": run.status_message}],
            "llm_calls": 0,
            "tokens": 0,
            "wall_s": None,
        }
    digest = DigestOutput.model_validate(raw)
    looks = {look.symbol: look for look in digest.looks}
    screen = digest.screen
    names = []
    for pick in digest.names.chosen if digest.names else []:
        look = looks.get(pick.name.symbol)
        memo = None
        if look is not None and look.part is not None and look.part.version_id is not None:
            memo = {
                "version": _url("version", look.part.version_id),
                "recommendation": look.recommendation,
                "sizing": look.sizing,
                "drift": look.drift,
                "previous": look.previous,
            }
        names.append(
            {
                "symbol": pick.name.symbol,
                "flag": pick.name.flag,
                "alpha_1w": pick.name.alpha_1w.value if pick.name.alpha_1w else None,
                "reason": pick.name.reason,
                "question": pick.question,
                "gaps": pick.gaps,
                "memo": memo,
            }
        )
    skipped = [
        {"symbol": s.symbol, "reason": s.reason} for s in (digest.names.skipped if digest.names else [])
    ]
    skipped += [{"symbol": look.symbol, "reason": look.skipped} for look in digest.looks if look.skipped]
    screen_version = screen.part.version_id if screen.part else None
    return {
        "as_of": digest.as_of.isoformat() if digest.as_of else None,
        "status": run.status,
        "screen": {
            "version": _url("version", screen_version) if screen_version else None,
            "flags": {flag: screen.flags.get(flag, 0) for flag in ("RED", "YELLOW", "GREEN")},
        },
        "names": names,
        "skipped": skipped,
        "decks": [
            {
                "symbol": d.symbol,
                "deck": d.title,
                "version": _url("version", d.part.version_id) if d.part and d.part.version_id else None,
                "skipped": d.skipped,
            }
            for d in digest.decks
        ],
        "digest": _url("version", version.pk) if version is not None else None,
        "unfinished": [{"step": u.what, "reason": u.reason} for u in digest.unfinished],
        "llm_calls": digest.llm_calls,
        "paid_calls": digest.paid_calls,
        "tokens": digest.tokens,
        "wall_s": digest.wall_s,
    }


def digest_markdown(run: Run) -> str:
    raw = (
        AgentStep.objects.filter(run=run, stage=DIGEST, key=DIGEST, status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    if raw is None:
        return f"# The desk's week\n\nNo digest: {run.status_message}"
    digest = DigestOutput.model_validate(raw)
    lines = [f"# The desk's week ending {digest.as_of}", ""]
    for title, text in sections(digest).items():
        lines += [f"## {title}", "", text, ""]
    return "\n".join(lines)


class WeekCommand(BaseCommand):
    help = "Run the desk's week: the screen, a closer look at flagged names, the followed decks, the digest."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--as-of", dest="as_of", help="YYYY-MM-DD: the week ending on this session")
        parser.add_argument("--max-names", dest="max_names", type=int, help="closer looks at most")
        parser.add_argument("--inline", action="store_true", help="run the week in this process")
        parser.add_argument("--wait", action="store_true", help="follow the week until it ends")
        parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds --wait waits at most")
        parser.add_argument("--out", type=Path, help="write week.json and digest.md here")
        parser.add_argument("--json", action="store_true", help="print the week as one JSON object")

    def refuse(self, message: str) -> NoReturn:
        self.stderr.write(f"week: {message}")
        raise SystemExit(2)

    def handle(self, *args: Any, **options: Any) -> None:
        # Imported here: the command is declared on the surface, which the registry loads.
        from memos.pipeline import driver
        from memos.pipeline.week.desk.start import start_week

        as_of = None
        if options["as_of"]:
            try:
                as_of = date.fromisoformat(options["as_of"])
            except ValueError:
                self.refuse(f"--as-of must be a date like 2017-09-01, got {options['as_of']!r}")
        out: Path | None = options["out"]
        if out is not None and out.exists() and not out.is_dir():
            self.refuse(f"--out {out} exists and is not a folder")
        try:
            run = start_week(as_of=as_of, max_names=options["max_names"], enqueue=not options["inline"])
        except ServiceError as exc:
            self.refuse(str(exc))
        chatter = self.stderr if options["json"] else self.stdout
        chatter.write(f"week {run.pk} started: {_url('run', run.pk)}")
        started = time.monotonic()
        if options["inline"]:
            driver.run_inline(str(run.pk))
            hooks().before_exit()
        elif options["wait"] or options["json"] or out is not None:
            self._follow(run, options["timeout"], chatter)
        else:
            return
        run.refresh_from_db()
        report = week_json(run)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            chatter.write(f"week {run.status} in {time.monotonic() - started:.1f} s: {run.status_message}")
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "week.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            (out / "digest.md").write_text(digest_markdown(run) + "\n", encoding="utf-8")
            chatter.write(f"wrote week.json and digest.md in {out}")
        if run.status not in (Run.Status.DONE, Run.Status.NEEDS_REVIEW):
            self.stderr.write(f"week: run {run.status}: {run.status_message}")
            raise SystemExit(1)
        if run.status == Run.Status.NEEDS_REVIEW:
            self.stderr.write(f"week: parts did not finish: {run.status_message}")
            raise SystemExit(NEEDS_REVIEW_EXIT)

    def _follow(self, run: Run, timeout: float, chatter: Any) -> None:
        started, last = time.monotonic(), ""
        while True:
            run.refresh_from_db()
            if run.status_message != last:
                chatter.write(run.status_message[:120])
                last = run.status_message
            if not run.is_active:
                return
            if time.monotonic() - started > timeout:
                self.stderr.write(f"week: gave up waiting after {timeout:.0f} s; the week goes on")
                raise SystemExit(1)
            time.sleep(POLL_S)
