"""The arguments every command that starts a run on a new brief takes (``analyze``, ``deck``)."""

from __future__ import annotations

from argparse import ArgumentParser

from memos.models import DEFAULT_AUDIENCE


def add_brief_arguments(parser: ArgumentParser, *, what: str, default_profile: str) -> None:
    parser.add_argument("ticker")
    parser.add_argument("--brief", required=True, help=f"the question the {what} must answer")
    parser.add_argument("--audience", default=DEFAULT_AUDIENCE)
    parser.add_argument("--notes", default="")
    parser.add_argument("--profile", default=default_profile, help="quick or full")
    parser.add_argument("--user", default="analyst", help="the analyst who owns the brief")
    parser.add_argument("--wait", action="store_true", help="follow the run until it ends")
    parser.add_argument("--inline", action="store_true", help="run the stages in this process")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds --wait waits at most")
