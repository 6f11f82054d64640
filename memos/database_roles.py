"""What the application's database role may do: read and write rows, nothing else.

scripts/run.sh connects the web server, the workers and every command to PostgreSQL as an application role
(DATABASE_URL), and runs ``manage.py migrate`` as the role that owns the tables (DATABASE_OWNER_URL, see
memos/management/commands/migrate.py). Not being the tables' owner (nor a superuser), the application role
cannot ALTER or DROP a table or DISABLE TRIGGER, so the triggers that keep frozen versions, governed versions
and the audit trail unchanged (migrations 0007 and 0008) hold against the application itself; and it is
granted no TRUNCATE, which would empty a table without firing a row trigger.

``grant_app_role`` runs as the owner after every migrate: the rows of every table and the sequences behind
their ids, and the same for tables and sequences the owner creates later (default privileges), so a
migration that adds a table works before the next grant too.
"""

from __future__ import annotations

from django.db.backends.utils import CursorWrapper

# Row access only; never TRUNCATE (it skips row triggers), REFERENCES or TRIGGER.
ROW_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
NEVER = "TRUNCATE, REFERENCES, TRIGGER"


def grant_app_role(cursor: CursorWrapper, role: str) -> None:
    """Give ``role`` the rows of every table in the public schema, as the tables' owner (the connected
    role); take back anything more an earlier grant gave (without a moment in which the role has less)."""
    quoted = cursor.db.ops.quote_name(role)
    for statement in (
        f"GRANT USAGE ON SCHEMA public TO {quoted}",
        f"GRANT {ROW_PRIVILEGES} ON ALL TABLES IN SCHEMA public TO {quoted}",
        f"REVOKE {NEVER} ON ALL TABLES IN SCHEMA public FROM {quoted}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {quoted}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT {ROW_PRIVILEGES} ON TABLES TO {quoted}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO {quoted}",
    ):
        cursor.execute(statement)


FROZEN_TABLE = "memos_artefactversion"


def role_problem(cursor: CursorWrapper) -> str:
    """Why the connected role must not run the desk ("" when it may): a superuser, or the owner of the
    tables, may switch off or drop the triggers that keep frozen versions unchanged, so with such a role the
    freeze would hold only by the application's good behaviour (issue 31, L6)."""
    cursor.execute(
        "SELECT current_user, r.rolsuper, r.rolbypassrls, "
        "(SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = %s) "
        "FROM pg_roles r WHERE r.rolname = current_user",
        [FROZEN_TABLE],
    )
    row = cursor.fetchone()
    if row is None:
        return "the connected role is not in pg_roles"
    role, superuser, bypass, owner = row
    if superuser or bypass:
        return (
            f"DATABASE_URL connects as {role!r}, a superuser: it could switch off the triggers that keep "
            "frozen versions unchanged. Connect the desk as a role that owns nothing and may only read and "
            "write rows (scripts/run.sh makes desk_app so), and give the owner as DATABASE_OWNER_URL for "
            "migrations."
        )
    if owner == role:
        return (
            f"DATABASE_URL connects as {role!r}, which owns the desk's tables: it could alter or drop the "
            "triggers that keep frozen versions unchanged. Connect the desk as another role that may only "
            "read and write rows, and give the owner as DATABASE_OWNER_URL for migrations."
        )
    return ""
