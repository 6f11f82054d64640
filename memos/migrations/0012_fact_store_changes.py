# The fact store's change log, kept by PostgreSQL itself: a row per statement that writes companies, facts,
# documents or data loads, whatever wrote them (a snapshot load, a data stage, the admin, psql). Read by
# memos.services.holdings.fact_store_version, which keys what is computed from the store (the home page's
# holdings, the data stage's evidence selections) in the shared cache.
#
# Not a Django model on purpose: a test's flush truncates every model's table, and the log must outlive that
# (its first row dates the database, so a recreated database never meets an older one's cache entries).

from django.db import migrations

WATCHED = ("memos_company", "memos_factrecord", "memos_sourcedocument", "memos_dataload")

CREATE = [
    """
    CREATE TABLE memos_fact_store_change (
        id bigserial PRIMARY KEY,
        changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )
    """,
    "INSERT INTO memos_fact_store_change DEFAULT VALUES",
    # Append-only: writers never wait on one another's row (a single counter row would be locked by every
    # writing transaction until its commit, and two loads locking companies in different orders deadlock).
    """
    CREATE FUNCTION memos_fact_store_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO memos_fact_store_change DEFAULT VALUES;
        RETURN NULL;
    END
    $$
    """,
    *(
        f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION memos_fact_store_changed()"
        for table in WATCHED
    ),
]
DROP = [
    *(f"DROP TRIGGER IF EXISTS {table}_changed ON {table}" for table in WATCHED),
    "DROP FUNCTION IF EXISTS memos_fact_store_changed()",
    "DROP TABLE IF EXISTS memos_fact_store_change",
]


class Migration(migrations.Migration):
    dependencies = [("memos", "0011_judge_calibration")]

    operations = [migrations.RunSQL(sql=CREATE, reverse_sql=DROP)]
