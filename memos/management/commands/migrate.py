"""``manage.py migrate``, Django's, run as the tables' owner when DATABASE_OWNER_URL is set.

The application connects as a role that may only read and write rows (DATABASE_URL, memos.database_roles);
creating and altering tables is the owner's. With DATABASE_OWNER_URL set (the same server and database as
DATABASE_URL, another role), this command connects as that owner, migrates, and then grants DATABASE_URL's
role the rows of every table, those a migration just added included. Without it, Django's command runs as
it always does, as DATABASE_URL's role (the test suite, a database with one role).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import DEFAULT_DB_ALIAS, connections

from memos.database_roles import grant_app_role


class Command(DjangoMigrate):
    help = (
        "Django's migrate; with DATABASE_OWNER_URL set, run as the tables' owner, then grant the application "
        "role (DATABASE_URL's) the rows of every table."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        owner: dict[str, str] | None = settings.DATABASE_OWNER
        if owner is None or options["database"] != DEFAULT_DB_ALIAS:
            super().handle(*args, **options)
            return
        connection = connections[DEFAULT_DB_ALIAS]
        app = {key: connection.settings_dict[key] for key in ("USER", "PASSWORD")}
        connection.close()
        connection.settings_dict.update(owner)
        try:
            super().handle(*args, **options)
            with connection.cursor() as cursor:
                grant_app_role(cursor, app["USER"])
            if options["verbosity"] >= 1:
                self.stdout.write(f"Granted {app['USER']} the rows of every table (as {owner['USER']}).")
        finally:
            connection.close()
            connection.settings_dict.update(app)
