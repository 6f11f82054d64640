"""A running run's status line as its live updates draw it: counted where a query may be made, drawn on the
events thread from what was handed over, with nothing read from the database there."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memos.live.events import RunEvent
from memos.models import Run
from memos.pipeline import cards
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db


def _drawn(run: Run, monkeypatch: pytest.MonkeyPatch) -> tuple[RunEvent, int]:
    """The status event ``publish_status`` hands to the events thread, drawn; and the queries drawing made."""
    handed: list[Callable[[], RunEvent] | RunEvent] = []
    monkeypatch.setattr(cards, "send_after_commit", handed.append)
    cards.publish_status(Run.objects.select_related("brief__company").get(pk=run.pk))
    [pending] = handed
    with CaptureQueriesContext(connection) as queries:
        event = pending if isinstance(pending, RunEvent) else pending()
    return event, len(queries)


def test_a_running_memo_s_line_is_drawn_with_no_query(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_for(alice, status=Run.Status.RUNNING)
    Run.objects.filter(pk=run.pk).update(tokens_spent=1_234)
    event, queries = _drawn(run, monkeypatch)
    assert queries == 0
    assert "1,234 tokens" in event.html and "parts" not in event.html


def test_a_running_week_s_line_counts_its_parts_and_is_drawn_with_no_query(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    week = run_for(alice, status=Run.Status.RUNNING)
    Run.objects.filter(pk=week.pk).update(workflow="week", tokens_spent=100)
    Run.objects.create(
        brief=week.brief,
        workflow="screen",
        status=Run.Status.DONE,
        created_by=alice,
        part_of=week,
        tokens_spent=22_345,
    )
    event, queries = _drawn(week, monkeypatch)
    assert queries == 0
    assert "22,445 tokens (its parts' included)" in event.html
