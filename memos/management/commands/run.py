"""``manage.py run WORKFLOW ...``: start a run of any workflow the desk has (memos.pipeline.registry), with
the options its package declares (memos.services.surfaces.command_for); ``manage.py run WORKFLOW --help``
lists them. ``analyze``, ``deck``, ``agency`` and ``screen`` are the same commands under their own names.

Exit status as every run command's (memos.management.run_command): 0 when the run is done or needs review, 1
when it failed, 2 for bad input, an unknown workflow included.
"""

from __future__ import annotations

import sys
from argparse import REMAINDER, ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from memos.management.run_command import command_for
from memos.pipeline.registry import WORKFLOWS, UnknownWorkflow


class Command(BaseCommand):
    help = "Start a run of a workflow: manage.py run WORKFLOW [its options] (WORKFLOW --help lists them)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("workflow", choices=sorted(WORKFLOWS), help="which workflow to run")
        parser.add_argument("rest", nargs=REMAINDER, help="the workflow's own arguments and options")

    def run_from_argv(self, argv: list[str]) -> None:
        """``manage.py run WORKFLOW ...``: the workflow's own command parses the rest, as if called by
        name."""
        if len(argv) < 3 or argv[2].startswith("-"):
            super().run_from_argv(argv)  # --help, or a missing workflow: argparse says which exist
            return
        try:
            command = command_for(argv[2])()
        except UnknownWorkflow as exc:
            sys.stderr.write(f"run: {exc}; it runs {', '.join(sorted(WORKFLOWS))}\n")
            raise SystemExit(2) from exc
        command.run_from_argv([argv[0], argv[2], *argv[3:]])

    def handle(self, *args: Any, **options: Any) -> None:
        """Called through ``call_command("run", WORKFLOW, *rest)``: the same as from the shell."""
        from django.core.management import call_command

        command = command_for(options["workflow"])()
        call_command(command, *options["rest"], stdout=self.stdout, stderr=self.stderr)
