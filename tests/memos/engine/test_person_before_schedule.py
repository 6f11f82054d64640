"""A person before a schedule (issue 33, 3): the desk's scheduled work goes on a queue of its own, which only
the workers kept for it take, and asks the model after people; a person's run starts at once while it runs.

The queue's choice and the watchdog's reading of both queues; the priority mark carried onto the fan-out's
threads; then real worker processes (one for people, one for scheduled work, as scripts/run.sh starts them)
and the fake server slowed down: two scheduled screens queued, one of them running, and a person's memo
claimed within seconds while the screen still runs.
"""

from __future__ import annotations

import time
from datetime import timedelta

import django_rq
import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from agents.llm.fakes.server import FakeLLMServer
from agents.llm.fanning import _CURRENT as FAN_OUT_MARK
from agents.llm.priority import is_scheduled, scheduled_work
from memos.models import Run, StageClaim
from memos.pipeline import driver, fanout
from memos.pipeline.breadth import Breadth
from memos.pipeline.liveness import LOCK_PREFIX
from memos.pipeline.registry import fake_answers
from memos.pipeline.watchdog import resume_stale_runs
from memos.services.runs import ask_watchlist, create_brief, start_run
from tests.memos.crash_harness import WORKER, Desk, desk_env, wait_for
from tests.memos.pipeline_support import analyst, load_desk_data, script_for
from tests.memos.screen.test_screen_run import DEMO

pytestmark = pytest.mark.django_db(transaction=True)

# Four sectors a screen: with one model slot for scheduled work at 400 ms a call, it runs for seconds.
SYMBOLS = ["XOM", "CVX", "DUK", "NEE", "JPM", "BAC", "JNJ", "PFE"]
LATENCY_MS = 400
FIRST_STEP_WITHIN_S = 5.0


def person_memo(question: str = "Is the buyback funded by operating cash?") -> Run:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=question)
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def scheduled_screen(question: str) -> Run:
    return ask_watchlist(
        owner=User.objects.filter(username="desk-schedule").first() or analyst("desk-schedule"),
        symbols=SYMBOLS,
        question=question,
        workflow="screen",
        profile="weekly",
        options={"strategy": DEMO.model_dump(mode="json")},
        enqueue=False,
        scheduled=True,
    )


def queued_on(name: str) -> list[str]:
    return [str(job.args[0]) for job in django_rq.get_queue(name).get_jobs()]


def empty_queues() -> None:
    for name in driver.QUEUES:
        django_rq.get_queue(name).empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated


def test_a_persons_run_goes_on_the_default_queue_and_scheduled_work_on_its_own() -> None:
    empty_queues()
    mine = person_memo()
    screen = scheduled_screen("Which symbols moved on their own this week?")
    driver.enqueue_stage(str(mine.pk), "data")
    driver.enqueue_stage(str(screen.pk), "prepare")
    assert queued_on("default") == [str(mine.pk)]
    assert queued_on("scheduled") == [str(screen.pk)]
    empty_queues()


def test_the_watchdog_leaves_a_scheduled_run_whose_job_waits_and_requeues_one_whose_job_was_lost() -> None:
    empty_queues()
    screen = scheduled_screen("Which symbols moved on their own this week?")
    Run.objects.filter(pk=screen.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    driver.enqueue_stage(str(screen.pk), "prepare")  # the scheduled worker is busy: the job waits
    assert resume_stale_runs(stale_after_s=60) == []
    empty_queues()  # as after a Redis restart
    assert resume_stale_runs(stale_after_s=60) == [str(screen.pk)]
    assert queued_on("scheduled") == [str(screen.pk)] and queued_on("default") == []  # still after people
    empty_queues()


def test_a_fan_outs_threads_carry_the_priority_of_whoever_started_them() -> None:
    breadth = Breadth(name="priority-test", why="each task is a subject of its own", distinct_verdicts="")

    def seen() -> tuple[bool, str]:
        mark = FAN_OUT_MARK.get()
        return is_scheduled(), mark.name if mark is not None else ""

    def both() -> list[tuple[bool, str]]:
        done = fanout.in_parallel([(n, seen) for n in range(4)], limit=2, breadth=breadth)
        return [future.result() for _, future in done]

    with scheduled_work():
        assert set(both()) == {(True, "priority-test")}
        assert fanout.start_outer(is_scheduled, size=1).result() is True
    # A person's fan-out on the same (kept) threads: nothing of the scheduled run stuck to them.
    assert set(both()) == {(False, "priority-test")}
    assert fanout.start_outer(is_scheduled, size=1).result() is False
    assert FAN_OUT_MARK.get() is None  # the mark lives on the task, never on the submitter
    fanout.started.pop(breadth.name)  # a test fan-out no workflow declares: the declarations' test skips it


def _claimed_at(run: Run) -> float | None:
    first = StageClaim.objects.filter(run=run).order_by("claimed_at").first()
    return first.claimed_at.timestamp() if first is not None else None


def test_a_persons_run_starts_at_once_while_scheduled_screens_hold_the_scheduled_worker() -> None:
    empty_queues()
    screens = [scheduled_screen(f"Which symbols moved on their own in week {n}?") for n in (1, 2)]
    mine = person_memo()
    with FakeLLMServer(latency_ms=LATENCY_MS, script=script_for(mine), answers=fake_answers()) as server:
        # Two model slots: one kept for people (LLM_SLOTS_KEPT_FOR_PEOPLE's default), one for the screens.
        desk = Desk(desk_env(server, LLM_MAX_CONCURRENCY="2"))
        try:
            people = desk.start("rqworker", "default", "--worker-class", WORKER, "--worker-ttl", "60")
            for_schedule = desk.worker()  # "default" first, then "scheduled", as run.sh's SCHEDULED_WORKERS
            for process in (people, for_schedule):
                desk.wait_for_log(process, "Listening on", timeout=60)
            for screen in screens:
                driver.enqueue_stage(str(screen.pk), "prepare")
            wait_for(lambda: server.in_flight >= 1, 60, "a scheduled screen asking the model")
            screen = next(s for s in screens if Run.objects.get(pk=s.pk).status == Run.Status.RUNNING)

            enqueued = time.time()
            driver.enqueue_stage(str(mine.pk), "data")
            try:
                wait_for(lambda: _claimed_at(mine) is not None, 30, "the person's first stage claimed")
            except AssertionError as late:
                raise AssertionError(f"{late}\n{desk.log_tails()}") from None
            waited = (_claimed_at(mine) or 0) - enqueued
            assert waited < FIRST_STEP_WITHIN_S, f"the person's run waited {waited:.1f} s for a worker"
            assert Run.objects.get(pk=screen.pk).status == Run.Status.RUNNING  # the screen still runs
            # One worker for scheduled work: the other screen waits in its queue, behind the first.
            assert [s.status for s in Run.objects.filter(pk__in=[s.pk for s in screens])].count("queued") == 1
            wait_for(
                lambda: Run.objects.filter(pk=mine.pk, status__in=Run.FINISHED_STATUSES).exists(),
                60,
                "the person's run to finish",
            )
        finally:
            desk.stop()
    mine.refresh_from_db()
    assert mine.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), mine.status_message
    client = redis.Redis.from_url(settings.REDIS_URL)
    for run in [mine, *screens]:
        client.delete(LOCK_PREFIX + str(run.pk))
    empty_queues()
