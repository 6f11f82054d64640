"""A memo brief's weekly position (seed 000): its analyst sets a day and a time (UTC); the scheduler's tick
writes the memo again once that time has come, once, as the next version of its line; a week with nothing
new costs no model call; a refusal is recorded; someone who only reads the brief cannot set it."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client

from memos.models import LLMCall, MemoSchedule, Run
from memos.pipeline import driver
from memos.pipeline.memo.desk.schedule import due_memos, set_memo_schedule
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, finished_run, load_desk_data, person, script_for

pytestmark = pytest.mark.django_db(transaction=True)

MONDAY_EARLY = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)  # a Monday, before the default 07:00


def test_the_weekly_memo_is_written_again_once_its_time_has_come() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    brief = create_brief(owner=owner, ticker="AAPL", question="Should the committee add before the launch?")
    first = start_run(brief=brief, user=owner, profile="quick", enqueue=False, workflow="memo")
    # One fake server for both weeks: its address is part of each request's hash, as an endpoint's is.
    with fake_llm(script_for(first)):
        driver.run_inline(str(first.pk))
        schedule = weekly(first, now=MONDAY_EARLY)
        assert due_memos(now=MONDAY_EARLY + timedelta(minutes=30), enqueue=False) == []  # 06:30: not yet
        [started] = due_memos(now=MONDAY_EARLY + timedelta(hours=1, minutes=5), enqueue=False)
        assert "Weekly memo started" in started
        assert due_memos(now=MONDAY_EARLY + timedelta(hours=2), enqueue=False) == []  # once a week
        schedule.refresh_from_db()
        run = Run.objects.get(pk=str(schedule.last_run_id))
        assert run.brief_id == brief.pk and run.profile == first.profile and run.workflow == "memo"
        assert run.scheduled  # the desk's own work: after people's runs
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW)
    # Nothing changed since the first memo: the ledger answered every call the week's memo made.
    assert LLMCall.objects.filter(run=run).exists()
    assert not LLMCall.objects.filter(run=run, outcome="ok").exists()
    assert run.versions.get().number == 2

    # A week later the run of the week before is still going: the wait is recorded, nothing started, and
    # the week's slot is kept: the next check, once that run has ended, writes the memo (issue 31 L2: the
    # slot was used up and the week went by unwritten).
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    next_week = MONDAY_EARLY + timedelta(days=7, hours=1, minutes=5)
    [waiting] = due_memos(now=next_week, enqueue=False)
    assert "Weekly memo waiting" in waiting and "already queued or running" in waiting
    schedule.refresh_from_db()
    assert schedule.last_outcome.startswith("Weekly memo waiting") and schedule.last_run_id == run.pk
    assert [waiting] == due_memos(now=next_week + timedelta(minutes=5), enqueue=False)  # still waiting
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    [started] = due_memos(now=next_week + timedelta(minutes=10), enqueue=False)
    assert "Weekly memo started" in started
    assert due_memos(now=next_week + timedelta(minutes=15), enqueue=False) == []  # and once only


def weekly(run: Run, *, now: datetime) -> MemoSchedule:
    """Mondays at 07:00 UTC, set at ``now``."""
    return set_memo_schedule(
        brief=run.brief, user=run.brief.owner, enabled=True, weekday=0, at=time(7, 0), now=now
    )


def test_a_time_older_than_a_day_is_let_go_and_a_change_starts_nothing_at_once() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    first = finished_run(owner)
    set_memo_schedule(brief=first.brief, user=owner, enabled=True, weekday=0, at=time(7, 0), now=MONDAY_EARLY)
    assert due_memos(now=MONDAY_EARLY + timedelta(days=2), enqueue=False) == []  # Wednesday: Monday's let go
    set_memo_schedule(
        brief=first.brief,
        user=owner,
        enabled=True,
        weekday=0,
        at=time(7, 0),
        now=MONDAY_EARLY + timedelta(days=7, hours=2),
    )
    assert due_memos(now=MONDAY_EARLY + timedelta(days=7, hours=2, minutes=1), enqueue=False) == []


def test_only_the_analyst_or_an_admin_sets_it_and_the_page_shows_it() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    first = finished_run(owner)
    version = first.versions.get()
    member = person("carol", "committee")
    with pytest.raises(ServiceError, match="only the brief's analyst or an admin"):
        set_memo_schedule(brief=first.brief, user=member, enabled=True)
    client = Client()
    client.force_login(owner)
    response = client.post(
        f"/briefs/{first.brief_id}/memo-schedule/", {"enabled": "on", "weekday": "4", "at": "08:30"}
    )
    assert response.status_code == 302
    saved = MemoSchedule.objects.get(brief=first.brief)
    assert (saved.enabled, saved.weekday, saved.at) == (True, 4, time(8, 30))
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert "Written again every Friday at 08:30 UTC" in page
    reader = Client()
    reader.force_login(member)
    assert reader.post(f"/briefs/{first.brief_id}/memo-schedule/", {"enabled": "off"}).status_code == 403
    assert MemoSchedule.objects.get(brief=first.brief).enabled


def test_an_admins_switch_off_holds_against_the_analyst_until_an_admin_switches_it_on(
    admin_user: User,
) -> None:
    load_desk_data("AAPL")
    owner = analyst()
    first = finished_run(owner)
    set_memo_schedule(brief=first.brief, user=owner, enabled=True, weekday=0, at=time(7, 0), now=MONDAY_EARLY)
    admin = Client()
    admin.force_login(admin_user)
    listed = MemoSchedule.objects.get(brief=first.brief)
    admin.post("/admin/memos/memoschedule/", {"action": "switch_off", "_selected_action": [listed.pk]})
    listed.refresh_from_db()
    assert (listed.enabled, listed.held_off_by_admin) == (False, True)
    assert due_memos(now=MONDAY_EARLY + timedelta(days=7, hours=1), enqueue=False) == []

    with pytest.raises(ServiceError, match="only an admin switches it back on"):
        set_memo_schedule(brief=first.brief, user=owner, enabled=True)
    analyst_client = Client()
    analyst_client.force_login(owner)
    refused = analyst_client.post(
        f"/briefs/{first.brief_id}/memo-schedule/", {"enabled": "on", "weekday": "0", "at": "07:00"}
    )
    assert refused.status_code == 409 and "only an admin switches it back on" in refused.content.decode()
    page = analyst_client.get(f"/versions/{first.versions.get().pk}/").content.decode()
    assert "Switched off by an admin" in page and "memo-schedule-form" not in page
    # The analyst may still keep it off; an admin switches it back on, and the analyst sets it again.
    set_memo_schedule(brief=first.brief, user=owner, enabled=False)
    set_memo_schedule(brief=first.brief, user=admin_user, enabled=True)
    set_memo_schedule(brief=first.brief, user=owner, enabled=True, weekday=3)
    listed.refresh_from_db()
    assert (listed.enabled, listed.held_off_by_admin, listed.weekday) == (True, False, 3)


def test_the_database_refuses_a_weekly_memo_held_off_by_an_admin_that_is_on() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    first = finished_run(owner)
    schedule = set_memo_schedule(brief=first.brief, user=owner, enabled=True)
    with pytest.raises(IntegrityError, match="memo_schedule_held_off_is_off"), transaction.atomic():
        MemoSchedule.objects.filter(pk=schedule.pk).update(held_off_by_admin=True)
