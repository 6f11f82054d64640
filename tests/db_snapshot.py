"""The rows of the test database, taken once and put back before each test that starts from them.

For fixtures that are slow to build and the same every time (a deck run finished on the fake LLM: seconds of
PDF rendering), built once per module and restored for each test in milliseconds. A restored database holds
exactly the rows it held when the snapshot was taken (every model's table emptied first, as a transactional
test's flush empties them), with the same ids, so a fixture's objects can be fetched again by primary key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from psycopg import Connection, sql

from memos.pipeline import fanout
from memos.services import notifications

T = TypeVar("T")

# Every column of these tables that draws its values from a sequence (serial and identity columns alike).
SEQUENCES = """
SELECT c.relname, a.attname, pg_get_serial_sequence(quote_ident(c.relname), a.attname)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relname = ANY(%s) AND c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
  AND pg_get_serial_sequence(quote_ident(c.relname), a.attname) IS NOT NULL
"""


@dataclass(frozen=True)
class Snapshot:
    """Each non-empty model table's rows, in COPY's binary format."""

    tables: tuple[tuple[str, bytes], ...]


def _model_tables() -> list[str]:
    # The tables a transactional test's flush empties: the models' (not the fact store's change log).
    return sorted(connection.introspection.django_table_names(only_existing=True, include_views=False))


def _raw() -> Connection[tuple[object, ...]]:
    connection.ensure_connection()
    raw = connection.connection
    assert isinstance(raw, Connection)
    return raw


def take() -> Snapshot:
    """Every committed row of every model's table (call it outside a test's transaction)."""
    tables = []
    with _raw().cursor() as cursor:
        for table in _model_tables():
            name = sql.Identifier(table)
            cursor.execute(sql.SQL("SELECT EXISTS (SELECT FROM {})").format(name))
            if not (cursor.fetchone() or (False,))[0]:
                continue
            with cursor.copy(sql.SQL("COPY {} TO STDOUT (FORMAT binary)").format(name)) as copy:
                tables.append((table, b"".join(bytes(block) for block in copy)))
    return Snapshot(tuple(tables))


def restore(snapshot: Snapshot) -> None:
    """Empty every model's table and put the snapshot's rows back, in one transaction."""
    tables = _model_tables()
    with transaction.atomic(), _raw().cursor() as cursor:
        # The rows were valid together; one table at a time they need not be (a vote's insert trigger wants
        # its open motion first, a foreign key its row). Replica mode holds back the triggers and the
        # foreign keys' checks while they go in. The suite connects as the test cluster's superuser.
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(", ").join(map(sql.Identifier, tables))))
        for table, data in snapshot.tables:
            copy_in = sql.SQL("COPY {} FROM STDIN (FORMAT binary)").format(sql.Identifier(table))
            with cursor.copy(copy_in) as into:
                into.write(data)
        # Ids never go back: each sequence stays past every id it handed out, the restored ones included.
        cursor.execute(SEQUENCES, [tables])
        for table, column, sequence in [tuple(map(str, row)) for row in cursor.fetchall()]:
            cursor.execute(
                sql.SQL("SELECT setval({}, GREATEST((SELECT max({}) FROM {}), last_value)) FROM {}").format(
                    sql.Literal(sequence), sql.Identifier(column), sql.Identifier(table), sql.SQL(sequence)
                )
            )
        cursor.execute("SET LOCAL session_replication_role = origin")
        # What the fact store's triggers, held back above, would have logged: its tables changed, so nothing
        # cached under the store's earlier version is taken for these rows (memos.pipeline.fact_store).
        cursor.execute("INSERT INTO memos_fact_store_change DEFAULT VALUES")
    # Content types are back with the snapshot's ids; the in-process cache may hold those a flush made.
    ContentType.objects.clear_cache()


def committed(build: Callable[[], T]) -> tuple[Snapshot, T]:
    """The rows ``build`` leaves committed, as a snapshot, and what it returned; the database is then put back
    as it was. For a module-scoped fixture, with the database unblocked, outside any test."""
    before = take()
    try:
        made = build()
        # The run's background work ends first (tests/conftest.py _background_threads_let_go says why).
        notifications.wait_for_mail()
        fanout.shutdown()
        return take(), made
    finally:
        restore(before)
