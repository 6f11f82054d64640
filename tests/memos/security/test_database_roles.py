"""The application's database role (memos.database_roles, scripts/lib.sh ensure_pg_roles) reads and writes
rows and nothing else: it cannot empty a frozen version's table, switch off the triggers that keep versions
frozen, or drop a table. And run.sh's database part brings a state directory from an older run.sh, whose
tables the superuser owns, over to the owner and application roles on its next start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection

from memos.database_roles import grant_app_role, role_problem
from memos.models import ArtefactVersion
from memos.services.accounts import DEMO_USERS
from tests.conftest import ROOT
from tests.memos.factories import company, run_for
from tests.private_services import free_port

Connection = psycopg.Connection[tuple[Any, ...]]
FROZEN = "memos_artefactversion"


@pytest.fixture
def app_role(transactional_db: None) -> Iterator[Connection]:
    """A role made as run.sh makes desk_app (no superuser, owns nothing, granted by the tables' owner after
    migrate), connected to the test database. The suite itself connects as the test cluster's superuser."""
    role = f"desk_app_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        grant_app_role(cursor, role)
    db = connection.settings_dict
    app = psycopg.connect(host=db["HOST"], port=db["PORT"], dbname=db["NAME"], user=role, autocommit=True)
    try:
        yield app
    finally:
        app.close()
        with connection.cursor() as cursor:
            cursor.execute(f"DROP OWNED BY {role}")  # its grants and default privileges
            cursor.execute(f"DROP ROLE {role}")


def frozen_version(owner: User) -> ArtefactVersion:
    run = run_for(owner, company())
    return ArtefactVersion.objects.create(
        brief=run.brief,
        run=run,
        number=1,
        kind="memo",
        title="AAPL memo",
        content={"thesis": "services carry the margin"},
        rendered_text="services carry the margin",
        content_hash="c" * 64,
        evaluated=True,
        changelog="first version of this brief",
    )


def refused(app: Connection, statement: str) -> str:
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as refusal:
        app.execute(statement)
    return str(refusal.value)


def test_the_app_role_cannot_truncate_disable_the_triggers_of_or_drop_a_frozen_versions_table(
    app_role: Connection, alice: User
) -> None:
    version = frozen_version(alice)

    assert "permission denied" in refused(app_role, f"TRUNCATE {FROZEN}")
    assert "must be owner" in refused(app_role, f"ALTER TABLE {FROZEN} DISABLE TRIGGER ALL")
    assert "must be owner" in refused(
        app_role, f"ALTER TABLE {FROZEN} DISABLE TRIGGER memos_artefactversion_frozen"
    )
    assert "must be owner" in refused(app_role, f"DROP TABLE {FROZEN}")
    assert "must be owner" in refused(app_role, f"ALTER TABLE {FROZEN} DROP COLUMN title")
    # The other way round the triggers, replication mode, is a superuser's.
    assert "permission denied" in refused(app_role, "SET session_replication_role = replica")

    # So the trigger holds against the application itself, and the version is as it was frozen.
    with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="is frozen"):
        app_role.execute(f"UPDATE {FROZEN} SET title = 'rewritten' WHERE id = %s", [version.pk])
    version.refresh_from_db()
    assert version.title == "AAPL memo"


def test_the_app_role_reads_and_writes_the_rows_it_needs(app_role: Connection, alice: User) -> None:
    frozen_version(alice)
    assert app_role.execute(f"SELECT title FROM {FROZEN}").fetchall() == [("AAPL memo",)]
    # An insert takes the id sequence's next value; an update and a delete need no more than the rows.
    inserted = app_role.execute(
        "INSERT INTO memos_passwordresetrequest (address_key, account_key, requested_at) "
        "VALUES ('a', 'b', now()) RETURNING id"
    ).fetchone()
    assert inserted is not None
    app_role.execute("UPDATE memos_passwordresetrequest SET account_key = 'c' WHERE id = %s", inserted)
    app_role.execute("DELETE FROM memos_passwordresetrequest WHERE id = %s", inserted)
    # The fact store's change log is written by a trigger, as the role whose statement fired it.
    before = app_role.execute("SELECT count(*) FROM memos_fact_store_change").fetchone()
    app_role.execute(
        "INSERT INTO memos_company (ticker, name, cik, taxonomy, sector, updated_at) "
        "VALUES ('KO', 'Coca-Cola', 21344, 'us-gaap', '', now())"
    )
    after = app_role.execute("SELECT count(*) FROM memos_fact_store_change").fetchone()
    assert before is not None and after == (before[0] + 1,)


def test_a_table_the_owner_adds_later_is_the_app_roles_to_read_and_write(app_role: Connection) -> None:
    # The default privileges of the grant: a migration's new table before the next grant.
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE memos_later (id bigint GENERATED BY DEFAULT AS IDENTITY, note text)")
    try:
        app_role.execute("INSERT INTO memos_later (note) VALUES ('added by a later migration')")
        assert app_role.execute("SELECT note FROM memos_later").fetchall() == [
            ("added by a later migration",)
        ]
        assert "permission denied" in refused(app_role, "TRUNCATE memos_later")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE memos_later")


# --- run.sh's database part, on a state directory an older run.sh made


@pytest.fixture
def state_dir() -> Iterator[Path]:
    # Under /var/tmp, not pytest's tmp_path: the postgres user must be able to reach the cluster's folder.
    path = Path(tempfile.mkdtemp(prefix="analyst-desk-roles-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def start_postgres(pg: Path, port: int) -> dict[str, str]:
    """scripts/lib.sh start_postgres in run mode, as run.sh calls it; the three passwords it left."""
    script = (
        'source scripts/lib.sh && start_postgres "$1" "$2" run && '
        'printf "%s %s %s" "$PG_PASSWORD" "$PG_OWNER_PASSWORD" "$PG_APP_PASSWORD"'
    )
    done = subprocess.run(
        ["bash", "-c", script, "start", str(pg), str(port)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    superuser, owner, app = done.stdout.split()
    url = f"@127.0.0.1:{port}/analyst_desk"
    return {
        "postgres": f"postgres://postgres:{superuser}{url}",
        "desk_owner": f"postgres://desk_owner:{owner}{url}",
        "desk_app": f"postgres://desk_app:{app}{url}",
    }


def stop_postgres(pg: Path) -> None:
    if not (pg / "data" / "postmaster.pid").exists():
        return
    pg_ctl = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))[-1]
    command = [str(pg_ctl), "-D", str(pg / "data"), "-m", "fast", "-w", "stop"]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, capture_output=True, timeout=60, check=False)


def manage(*args: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "ANALYST_DESK_TESTING": "true", "DATABASE_OWNER_URL": "", **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_run_sh_brings_an_older_state_directory_over_to_the_owner_and_app_roles(state_dir: Path) -> None:
    pg, port = state_dir / "pg", free_port()
    try:
        urls = start_postgres(pg, port)
        # What an older run.sh did: migrate as the superuser, who then owns every table.
        manage("migrate", "--noinput", DATABASE_URL=urls["postgres"])
        stop_postgres(pg)

        assert start_postgres(pg, port) == urls  # the next start: same passwords, the tables handed over
        migrated = manage(
            "migrate", "--noinput", DATABASE_URL=urls["desk_app"], DATABASE_OWNER_URL=urls["desk_owner"]
        )
        assert "Granted desk_app the rows of every table (as desk_owner)." in migrated

        with psycopg.connect(urls["desk_owner"], autocommit=True) as owner:
            not_owned = owner.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tableowner <> 'desk_owner'"
            ).fetchall()
            roles = owner.execute(
                "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                "WHERE rolname LIKE 'desk_%' ORDER BY rolname"
            ).fetchall()
        assert not_owned == []
        assert roles == [("desk_app", False, False, False), ("desk_owner", False, False, False)]

        # The desk works as desk_app: the demo users and groups are rows like any other.
        assert "created demo users" in manage("bootstrap_demo", "--no-data", DATABASE_URL=urls["desk_app"])
        with psycopg.connect(urls["desk_app"], autocommit=True) as app:
            assert app.execute("SELECT count(*) FROM auth_user").fetchone() == (len(DEMO_USERS),)
            assert "permission denied" in refused(app, f"TRUNCATE {FROZEN}")
            assert "must be owner" in refused(app, f"ALTER TABLE {FROZEN} DISABLE TRIGGER ALL")
            assert "must be owner" in refused(app, f"DROP TABLE {FROZEN}")
            assert "permission denied" in refused(app, "CREATE TABLE memos_sneaky (id int)")
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(f"postgres://desk_app:wrong@127.0.0.1:{port}/analyst_desk")
    finally:
        stop_postgres(pg)


def test_settings_refuse_an_owner_url_for_another_database() -> None:
    env = {**os.environ, "DATABASE_OWNER_URL": "postgres://desk_owner:x@127.0.0.1:1/elsewhere"}
    done = subprocess.run(
        [sys.executable, "-c", "import agency.settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "DATABASE_OWNER_URL must name the same server, port and database as DATABASE_URL" in done.stderr
    assert settings.DATABASE_OWNER is None  # the suite migrates as its one role


def test_the_desk_refuses_to_start_on_a_superuser_or_the_tables_owner(app_role: Connection) -> None:
    # The suite connects as the cluster's superuser: refused, saying why.
    with connection.cursor() as cursor:
        assert "a superuser" in role_problem(cursor)
    # The role run.sh makes passes.
    with app_role.cursor() as cursor:
        assert role_problem(cursor) == ""  # type: ignore[arg-type]  # a psycopg cursor runs the same SQL
    # A role that owns the frozen versions' table (and is no superuser) is refused too.
    owner = f"desk_owner_{uuid.uuid4().hex[:8]}"
    db = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {owner} LOGIN NOSUPERUSER")
        cursor.execute(f"ALTER TABLE {FROZEN} OWNER TO {owner}")
    try:
        with (
            psycopg.connect(host=db["HOST"], port=db["PORT"], dbname=db["NAME"], user=owner) as conn,
            conn.cursor() as cursor,
        ):
            assert "owns the desk's tables" in role_problem(cursor)  # type: ignore[arg-type]
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {FROZEN} OWNER TO CURRENT_USER")
            cursor.execute(f"DROP OWNED BY {owner}")
            cursor.execute(f"DROP ROLE {owner}")
    # The command exits 2 with the reason on the superuser's connection.
    done = subprocess.run(
        [sys.executable, "manage.py", "check_database_role"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "DATABASE_URL": _url_of(db)},
    )
    assert done.returncode == 2 and "a superuser" in done.stderr


def _url_of(db: dict[str, Any]) -> str:
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
