"""``manage.py check_database_role``: refuse to start the desk on a role that voids the freeze (issue 31, L6).

scripts/run.sh runs it after the migrations and before the web server and the workers: a DATABASE_URL an
operator gives that names a superuser or the tables' owner stops the start with one line saying why (exit
2); the role run.sh makes itself passes (exit 0)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from memos.database_roles import role_problem


class Command(BaseCommand):
    help = "Exit 2, saying why, when DATABASE_URL's role is a superuser or owns the desk's tables."

    def handle(self, *args: Any, **options: Any) -> None:
        with connection.cursor() as cursor:
            problem = role_problem(cursor)
        if problem:
            self.stderr.write(f"check_database_role: {problem}")
            raise SystemExit(2)
        self.stdout.write("the desk's database role may only read and write rows")
