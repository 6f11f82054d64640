"""The desk's week on its schedule: never for a slot that passed before the desk first met the schedule,
once per slot after that, nothing when off, and a refusal said and recorded; the week the data holds when
nobody names one; the brief form never offers the week."""

from __future__ import annotations

from datetime import UTC, date, datetime

import django_rq
import pytest
from django.test import Client

from memos.forms import BriefForm
from memos.models import Run, WeekSchedule
from memos.pipeline import driver
from memos.pipeline.week.desk.schedule import weeks_due
from memos.pipeline.week.desk.start import start_week
from memos.services.errors import ServiceError
from tests.memos.pipeline_support import analyst, person
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

SATURDAY = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)  # the day after a Friday slot: a fresh desk
FRIDAY_EVENING = datetime(2026, 11, 27, 21, 40, tzinfo=UTC)  # the next slot has come
SYMBOLS = ["XOM", "CVX", "JPM"]


@pytest.fixture
def on() -> object:
    with changed("memos.pipeline.week", schedule="fri 21:30"):
        yield


def test_a_fresh_desk_waits_for_the_next_slot_then_starts_one_week_per_slot(on: None) -> None:
    analyst("analyst")
    assert weeks_due(SATURDAY) == []  # Friday's slot passed before the desk met the schedule
    assert not Run.objects.exists()
    assert WeekSchedule.objects.get().first_seen_at == SATURDAY
    [said] = weeks_due(FRIDAY_EVENING)
    assert said.startswith("Started the desk's week")
    week = Run.objects.get(workflow="week")
    assert week.scheduled and week.brief.owner.username == "analyst"
    row = WeekSchedule.objects.get()
    assert row.last_run == week and row.last_slot_at == datetime(2026, 11, 27, 21, 30, tzinfo=UTC)
    Run.objects.filter(pk=week.pk).update(status=Run.Status.DONE)
    assert weeks_due(FRIDAY_EVENING) == []  # this slot is done
    assert Run.objects.filter(workflow="week").count() == 1
    with changed("memos.pipeline.week", schedule="off"):
        assert weeks_due(datetime(2026, 12, 4, 22, 0, tzinfo=UTC)) == []
    assert Run.objects.filter(workflow="week").count() == 1


def test_a_slot_whose_owner_is_no_analyst_is_said_and_recorded(on: None) -> None:
    assert weeks_due(SATURDAY) == []
    [said] = weeks_due(FRIDAY_EVENING)
    assert "not started" in said and "not an active analyst" in said
    assert WeekSchedule.objects.get().last_outcome == said
    assert not Run.objects.exists()
    analyst("analyst")
    assert weeks_due(FRIDAY_EVENING) == []  # the slot was acted on: refused once, not retried every tick


def test_the_week_screens_the_last_week_the_watchlist_prices_reach_unless_one_is_named() -> None:
    analyst("analyst")
    week = start_week(symbols=SYMBOLS, enqueue=False)
    # The stocknet prices end on Friday 2017-09-01 (the benchmark's file runs on to 2020).
    assert week.config["as_of"] == "2017-09-01"
    Run.objects.filter(pk=week.pk).update(status=Run.Status.CANCELLED)
    named = start_week(as_of=date(2015, 8, 21), symbols=SYMBOLS, enqueue=False)
    assert named.config["as_of"] == "2015-08-21"


def test_a_week_beyond_its_bound_of_names_is_refused_and_nothing_is_written() -> None:
    analyst("analyst")
    with pytest.raises(ServiceError, match="0 to 10 names"):
        start_week(max_names=99, symbols=SYMBOLS, enqueue=False)
    assert not Run.objects.exists()


def test_the_brief_form_never_offers_the_week() -> None:
    offered = [name for name, _ in BriefForm().fields["workflow"].choices]  # type: ignore[attr-defined]
    assert "week" not in offered and "screen" in offered
    assert not BriefForm(
        {"workflow": "week", "ticker": "AAPL", "question": "q", "profile": "weekly"}
    ).is_valid()


def test_run_this_week_now_is_an_analysts_and_a_refusal_is_said_on_the_home_page(on: None) -> None:
    reader = Client()
    reader.force_login(person("cora", "committee"))
    assert "Run this week now" not in reader.get("/").content.decode()
    assert reader.post("/week/run-now/").status_code == 403
    assert not Run.objects.exists()
    ana = analyst("analyst")
    reader.force_login(ana)
    home = reader.get("/").content.decode()
    assert "Run this week now" in home and "the desk&#x27;s week" in home.lower()
    started = reader.post("/week/run-now/")
    week = Run.objects.get(workflow="week")
    assert started.status_code == 302 and started["Location"] == f"/runs/{week.pk}/"
    assert week.scheduled and week.status == Run.Status.QUEUED
    again = reader.post("/week/run-now/")  # the week's brief already has a run going
    assert again.status_code == 409 and "The week did not start" in again.content.decode()
    assert Run.objects.filter(workflow="week").count() == 1


def test_the_weeks_job_may_hold_its_worker_for_a_day_and_a_memos_the_queues_hour() -> None:
    # The week runs its parts inside its own job: on the embedded model that is hours, past the queue's
    # default (its first embedded week's job was killed at the hour, mid-screen).
    analyst("analyst")
    week = start_week(symbols=SYMBOLS, enqueue=False)
    memo = Run.objects.create(brief=week.brief, workflow="memo", created_by=week.created_by, status="failed")
    queue = django_rq.get_queue("scheduled")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    driver.enqueue_stage(str(week.pk), "screen")
    driver.enqueue_stage(str(memo.pk), "data")
    timeouts = {str(job.args[0]): job.timeout for job in queue.get_jobs()}
    default = django_rq.get_queue("default")
    timeouts |= {str(job.args[0]): job.timeout for job in default.get_jobs()}
    assert timeouts[str(week.pk)] == 24 * 3600
    assert timeouts[str(memo.pk)] == 3600
    queue.empty()  # type: ignore[no-untyped-call]
    default.empty()  # type: ignore[no-untyped-call]
