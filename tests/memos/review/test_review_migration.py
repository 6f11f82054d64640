"""The review rules' migration on a database that already holds motions: the open ones pin the policy of the
day, the closed ones pin nothing (their policy then is not known), and every one keeps working."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memos.models import Motion

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("memos", "0012_fact_store_changes")]


def test_the_migration_pins_todays_policy_on_open_motions_and_none_on_closed_ones() -> None:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("memos")
    executor.migrate(BEFORE)
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    try:
        user = old.get_model("auth", "User").objects.create(username="ana")
        company = old.get_model("memos", "Company").objects.create(ticker="AAPL", name="Apple Inc.")
        brief = old.get_model("memos", "Brief").objects.create(company=company, question="Q?", owner=user)
        run = old.get_model("memos", "Run").objects.create(brief=brief, created_by=user, status="done")
        version_model = old.get_model("memos", "ArtefactVersion")
        motion_model = old.get_model("memos", "Motion")
        versions = [
            version_model.objects.create(
                brief=brief,
                run=run,
                number=number,
                kind="memo",
                title="AAPL memo",
                content={"n": number},
                rendered_text="## Thesis\nKeep it.",
                content_hash=str(number) * 64,
                evaluated=True,
                changelog="first",
                status="superseded" if number == 1 else "ready_for_review",
            )
            for number in (1, 2)
        ]
        closed = motion_model.objects.create(
            version=versions[0],
            closed_at=datetime(2026, 11, 1, tzinfo=UTC),
            closed_because="superseded by v2",
        )
        still_open = motion_model.objects.create(version=versions[1])
        old.get_model("memos", "ReviewPolicy").objects.update_or_create(
            pk=1, defaults={"min_votes": 4, "approval_share": 0.6}
        )
    finally:
        MigrationExecutor(connection).migrate(latest)

    pinned = Motion.objects.get(pk=still_open.pk)
    assert (pinned.min_votes, pinned.approval_share) == (4, 0.6)
    unpinned = Motion.objects.get(pk=closed.pk)
    assert (unpinned.min_votes, unpinned.approval_share) == (None, None)
    assert unpinned.closed_because == "superseded by v2"
