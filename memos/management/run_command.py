"""What every command that starts a run on a new brief shares (``manage.py run <workflow>``, and its aliases
``analyze``, ``deck``, ``agency`` and ``screen``): the brief's arguments, the one way a run starts
(memos.services.runs.ask), following the run with a progress bar (``--wait``) or running its stages in this
process (``--inline``), and the exit status: 0 when the run is done, 3 when it ended needing review (a part
not finished, an escalated deck, a memo not evaluated: what it made is written, and a person should look),
1 when it failed (with its reason) or the wait gave up, 2 for bad input (one line on stderr). A workflow's
command says what its finished run printed and wrote.
"""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, OutputWrapper

from memos.models import DEFAULT_AUDIENCE, AgentStep, Run
from memos.pipeline import driver
from memos.pipeline.hooks import hooks
from memos.pipeline.registry import workflow_for
from memos.services.errors import ServiceError
from memos.services.runs import ask, ask_watchlist
from memos.services.surfaces import surface_for

BAR_WIDTH = 30
POLL_S = 0.5
FINISHED_OK = (Run.Status.DONE, Run.Status.NEEDS_REVIEW)
NEEDS_REVIEW_EXIT = 3  # what it made is written, but a person should look before anyone relies on it


class RunCommand(BaseCommand):
    workflow: ClassVar[str]  # Run.workflow of the runs it starts
    default_profile: ClassVar[str]
    # The option that carries the brief's question; optional where the workflow has a question of its own
    # to ask ({company} is the company's name).
    question_option: ClassVar[str] = "brief"
    default_question: ClassVar[str] = ""
    # What ``--out DIR`` writes of the finished run, for the option's help; "" when the command has none.
    # A command with it waits for the run's end even without ``--wait``.
    writes_out: ClassVar[str] = ""
    chatter: OutputWrapper  # where progress goes: stdout, or stderr when stdout carries --json

    invoked_as: str = ""  # the name typed in the shell (analyze, or run memo's memo), set by run_from_argv

    @property
    def name(self) -> str:
        """How its messages begin: the command as the person typed it (``analyze: run failed: ...``)."""
        return self.invoked_as or self.workflow

    def run_from_argv(self, argv: list[str]) -> None:
        self.invoked_as = argv[1]
        super().run_from_argv(argv)

    def add_arguments(self, parser: ArgumentParser) -> None:
        what = workflow_for(self.workflow).choice.split(":")[0].lower()
        profiles = ", ".join(workflow_for(self.workflow).profiles())
        self.add_subject(parser)
        aliases = ("--brief",) if self.question_option != "brief" else ()  # every run command takes --brief
        parser.add_argument(
            f"--{self.question_option}",
            *aliases,
            dest=self.question_option,
            required=not self.default_question,
            default=self.default_question,
            help=f"the question the {what} must answer",
        )
        parser.add_argument("--audience", default=DEFAULT_AUDIENCE)
        parser.add_argument("--notes", default="")
        parser.add_argument("--profile", default=self.default_profile, help=f"one of: {profiles}")
        parser.add_argument("--user", default="analyst", help="the analyst who owns the brief")
        parser.add_argument("--wait", action="store_true", help="follow the run until it ends")
        parser.add_argument("--inline", action="store_true", help="run the stages in this process")
        parser.add_argument("--timeout", type=float, default=3600, help="seconds --wait waits at most")
        if self.writes_out:
            parser.add_argument("--out", type=Path, help=f"write {self.writes_out} here")

    def add_subject(self, parser: ArgumentParser) -> None:
        """What the brief is about: a company's ticker here; a watchlist's command names its own."""
        parser.add_argument("ticker")

    def start(self, user: User, options: dict[str, Any]) -> Run:
        """Start the run (memos.services.runs.ask); ServiceError for a refusal."""
        return ask(
            owner=user,
            ticker=options["ticker"],
            question=options[self.question_option],
            audience=options["audience"],
            notes=options["notes"],
            workflow=self.workflow,
            profile=options["profile"],
            enqueue=not options["inline"],
        )

    def check_options(self, options: dict[str, Any]) -> str:
        """What is wrong with the workflow's own options, or ""; checked before anything is written."""
        out: Path | None = options.get("out")
        if out is not None and out.exists() and not out.is_dir():
            return f"--out {out} exists and is not a folder"
        return ""

    def needs_the_end(self, options: dict[str, Any]) -> bool:
        """Whether the command must wait for the run even without ``--wait`` (it writes what the run made)."""
        return options.get("out") is not None

    def finish(self, run: Run, seconds: float, options: dict[str, Any]) -> None:
        """Say what the finished run made (it is done or needs review); raise SystemExit(1) if it is not
        what was asked for."""
        self.stdout.write(f"{self.workflow} {run.status} in {seconds:.1f} s: {run.status_message}")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            self.refuse(f"no user {options['user']!r}; run manage.py bootstrap_demo or pass --user")
        problem = self.check_options(options)
        if problem:
            self.refuse(problem)
        try:
            run = self.start(user, options)
        except ServiceError as exc:
            self.refuse(str(exc))
        # With --json, stdout carries the one object alone; what a person follows goes to stderr.
        self.chatter = self.stderr if options.get("json") else self.stdout
        self.chatter.write(f"run {run.pk} started: {settings.SITE_URL.rstrip('/')}/runs/{run.pk}/")
        started = time.monotonic()
        if options["inline"]:
            driver.run_inline(str(run.pk))
            hooks().before_exit()  # the notices of the version it froze leave before this process does
        elif options["wait"] or self.needs_the_end(options):
            self._follow(run, options["timeout"])
        else:
            return
        run.refresh_from_db()
        self.chatter.write("")
        if run.status not in FINISHED_OK:
            self.stderr.write(f"{self.name}: run {run.status}: {run.status_message}")
            raise SystemExit(1)
        self.finish(run, time.monotonic() - started, options)
        if run.status == Run.Status.NEEDS_REVIEW:
            self.stderr.write(f"{self.name}: the run needs review: {run.status_message}")
            raise SystemExit(NEEDS_REVIEW_EXIT)

    def refuse(self, message: str) -> NoReturn:
        self.stderr.write(f"{self.name}: {message}")
        raise SystemExit(2)

    def _follow(self, run: Run, timeout: float) -> None:
        started, last = time.monotonic(), ""
        while True:
            run.refresh_from_db()
            last = self._draw(run, last)
            if run.status not in Run.ACTIVE_STATUSES:
                return
            if time.monotonic() - started > timeout:
                self.stderr.write(f"\n{self.name}: gave up waiting after {timeout:.0f} s; the run goes on")
                raise SystemExit(1)
            time.sleep(POLL_S)

    def _draw(self, run: Run, last: str) -> str:
        """Redraw the bar in place on a terminal; elsewhere (a log) print a line only when it changes."""
        steps = AgentStep.objects.filter(run=run)
        total = steps.count() or 1
        done = steps.filter(status__in=[AgentStep.Status.DONE, AgentStep.Status.SKIPPED]).count()
        filled = round(BAR_WIDTH * done / total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        line = f"[{bar}] {done}/{total} steps  {run.status_message[:50]:<50}"
        if self.chatter is self.stdout and sys.stdout.isatty():
            self.stdout.write(f"\r{line}", ending="")
        elif line != last:
            self.chatter.write(line.rstrip())
        return line


class WatchlistCommand(RunCommand):
    """A run on a watchlist of symbols instead of one company's ticker."""

    def add_subject(self, parser: ArgumentParser) -> None:
        parser.add_argument("symbols", nargs="+", help="the watchlist's symbols")

    def start(self, user: User, options: dict[str, Any]) -> Run:
        return ask_watchlist(
            owner=user,
            symbols=[symbol.upper() for symbol in options["symbols"]],
            question=options[self.question_option],
            audience=options["audience"],
            notes=options["notes"],
            workflow=self.workflow,
            profile=options["profile"],
            enqueue=not options["inline"],
        )


def plain_command(name: str) -> type[RunCommand]:
    """The command of a workflow that declares none of its own: its subject, question and profiles are all
    it needs (memos.services.surfaces.command_for)."""
    workflow = workflow_for(name)
    base = WatchlistCommand if workflow.subject == "watchlist" else RunCommand
    attributes = {
        "help": f"Start a run: {workflow.choice}.",
        "workflow": name,
        "default_profile": next(iter(workflow.profiles())),
    }
    return type(f"{name.title()}Command", (base,), attributes)


def command_for(name: str) -> type[BaseCommand]:
    """The command that starts a run of the workflow (``manage.py run <name>``): its declared one
    (memos.services.surfaces.Surface.command), or the plain one every workflow gets."""
    surface = surface_for(name)
    return surface.command() if surface.command is not None else plain_command(name)
