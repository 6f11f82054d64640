"""A week's worker killed for real (SIGKILL, the worker and its work-horse) after one of its closer looks
froze: the watchdog queues the week again, a fresh worker finishes it, and no name gets a second memo nor
any finished memo a second call. The in-process test (test_week_run) covers each resumption path; this one
proves it on the production worker, as `kill -9` would on a desk."""

from __future__ import annotations

from datetime import date

import django_rq
import pytest

from agents.llm.fakes.server import FakeLLMServer
from memos.models import LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.registry import fake_answers, workflow_for
from memos.pipeline.week.desk.start import start_week
from tests.memos.crash_harness import running_desk, wait_for
from tests.memos.pipeline_support import analyst, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)

WATCHLIST = ["AAPL", "XOM", "CVX", "DUK", "NEE", "JPM", "BAC"]


def _memo_frozen(week: Run) -> bool:
    return Run.objects.filter(part_of=week, workflow="memo", versions__isnull=False).exists()


def test_a_week_killed_after_a_closer_look_froze_resumes_without_a_second_memo() -> None:
    analyst("analyst")
    person("committee", "committee")
    load_desk_data("AAPL")
    week = start_week(as_of=date(2015, 8, 21), max_names=2, symbols=WATCHLIST, enqueue=False)
    for queue in ("default", "scheduled"):
        django_rq.get_queue(queue).empty()  # type: ignore[no-untyped-call]  # another test's jobs
    with FakeLLMServer(latency_ms=300, answers=fake_answers()) as server, running_desk(server) as desk:
        desk.watchdog()
        worker = desk.worker()
        driver.enqueue_stage(str(week.pk), workflow_for("week").first_stage)
        wait_for(lambda: _memo_frozen(week), 120, "a closer look to freeze")
        week.refresh_from_db()
        assert week.is_active, "the week ended before the kill: the test would prove nothing"
        parts = Run.objects.filter(part_of=week)
        frozen = set(parts.filter(versions__isnull=False).values_list("pk", flat=True))
        names = set(parts.filter(workflow="memo").values_list("brief__company__ticker", flat=True))
        desk.kill(worker)
        desk.worker()  # the replacement; the watchdog queues the week again once its heartbeat is stale
        desk.wait_until_finished(week, 120, "the resumed week to finish")
    week.refresh_from_db()
    assert week.status == Run.Status.DONE, week.status_message
    memos = Run.objects.filter(part_of=week, workflow="memo")
    tickers = list(memos.values_list("brief__company__ticker", flat=True))
    assert len(tickers) == len(set(tickers)) == 2, tickers  # one memo a name, none started twice
    assert names <= set(tickers)
    for run in Run.objects.filter(pk__in=frozen):
        # What froze before the kill stays as it was: one version, no call after its end.
        assert run.versions.count() == 1
        assert run.finished_at is not None
        assert not LLMCall.objects.filter(run=run, created_at__gt=run.finished_at).exists()
    assert week.versions.count() == 1  # one digest
