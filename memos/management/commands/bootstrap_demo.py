"""``manage.py bootstrap_demo``: groups, demo users and the bundled real-data snapshot, idempotently.

``scripts/run.sh`` calls it on every start; an unchanged snapshot is recognised by its content hash and
skipped, so a second start is quick. Demo users are created once, and only on a site served on loopback
alone: every ALLOWED_HOSTS entry, SITE_URL and any trusted CSRF origin loopback, and no proxy configured
(see ``memos.services.accounts.ensure_demo_users``); otherwise it says which setting stopped them.
``--list-users`` prints the demo logins and touches nothing.
"""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from agents.data.errors import DataError
from memos.services.accounts import DEMO_USERS, ensure_demo_users, public_exposure


class Command(BaseCommand):
    help = "Create the auth groups and demo users and load the bundled real-data snapshot (idempotent)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--list-users", action="store_true", help="print the demo logins and stop")
        parser.add_argument("--no-data", action="store_true", help="only groups and demo users")
        parser.add_argument("--force", action="store_true", help="reload the snapshot even if unchanged")
        parser.add_argument(
            "--data-dir", type=Path, help="load this snapshot folder instead of settings.SNAPSHOT_DIR"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list_users"]:
            if public_exposure():
                self.stdout.write("none: demo logins exist only on a site served on loopback")
                return
            width = max(len(user.username) for user in DEMO_USERS)
            for user in DEMO_USERS:
                self.stdout.write(f"{user.username.ljust(width)}  {user.password}  ({user.group})")
            return
        seed = ensure_demo_users()
        if seed.skipped:
            self.stdout.write(f"groups are in place; {seed.skipped}")
        else:
            self.stdout.write(f"groups are in place; created demo users: {', '.join(seed.created) or 'none'}")
        if options["no_data"]:
            return
        from memos.services.snapshot import load_snapshot  # pandas and friends only when loading data

        root: Path = options["data_dir"] or Path(settings.SNAPSHOT_DIR)
        if not root.is_dir():
            self.stderr.write(f"bootstrap_demo: no snapshot folder at {root}")
            raise SystemExit(2)
        try:
            report = load_snapshot(root=root, force=options["force"])
        except DataError as exc:
            self.stderr.write(f"bootstrap_demo: {exc}")
            raise SystemExit(2) from exc
        self.stdout.write(report.summary())
