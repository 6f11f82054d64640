"""The run engine's promises, one at a time: a stage runs in one worker only, a worker that lost its claim
writes nothing, a heartbeat outlives a database hiccup, a stage that keeps failing ends the run with its
reason after a bounded number of resumes, and a finished run never runs again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import django_rq
import pytest
import redis
from django.conf import settings
from django.db import OperationalError
from django.test import override_settings
from django.utils import timezone

from memos.models import AgentStep, Run, StageClaim
from memos.pipeline import claims, driver, registry
from memos.pipeline.claims import Hold, Refusal
from memos.pipeline.context import StageContext
from memos.pipeline.errors import LeaseLost
from memos.pipeline.liveness import LOCK_PREFIX, Heartbeat, RunLock
from memos.pipeline.watchdog import resume_stale_runs
from tests.memos.pipeline_support import fake_llm, fake_settings, quick_memo_run, script_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run() -> Iterator[Run]:
    yield from quick_memo_run()


def claim(run: Run, stage: str = "data") -> Hold:
    held = claims.claim_stage(str(run.pk), stage, first=stage == "data")
    assert isinstance(held, Hold), held
    return held


def take_over(run: Run, stage: str = "data") -> Hold:
    """Another worker claims the run after this one's Redis lock expired (a pause longer than its TTL)."""
    redis.Redis.from_url(settings.REDIS_URL).delete(LOCK_PREFIX + str(run.pk))
    return claim(run, stage)


def context(run: Run, hold: Hold) -> StageContext:
    fresh = Run.objects.select_related("brief__company").get(pk=run.pk)
    return StageContext(run=fresh, workflow=registry.workflow_for(fresh.workflow), hold=hold)


def test_a_second_worker_is_kept_off_a_run_another_holds(run: Run) -> None:
    first = claim(run)
    driver.execute_stage(str(run.pk), "data")  # the second worker does nothing
    refused = claims.claim_stage(str(run.pk), "data", first=True)
    assert isinstance(refused, Refusal) and refused.reason == "another worker holds the run"
    run.refresh_from_db()
    assert run.lease == first.lease and StageClaim.objects.filter(run=run).count() == 1
    claims.release(first, StageClaim.Outcome.ERROR)


def test_a_worker_that_lost_its_claim_writes_nothing_and_the_new_holder_writes(run: Run) -> None:
    stale, current = claim(run), None
    step = AgentStep.objects.get(run=run, key="evidence")
    current = take_over(run)
    ghost = context(run, stale)
    ghost.start(step)  # written in the background; the stage's next write or its end says what happened
    with pytest.raises(LeaseLost):
        ghost.settle()
    assert stale.lost.is_set()
    step.refresh_from_db()
    assert step.status == AgentStep.Status.PENDING
    holder = context(run, current)
    holder.start(step)
    holder.settle()
    step.refresh_from_db()
    assert step.status == AgentStep.Status.RUNNING
    with pytest.raises(LeaseLost):
        claims.finish(stale, Run.Status.DONE, "done by a ghost")
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING and run.lease == current.lease
    # The first claim is recorded as abandoned, the second is the one running.
    outcomes = list(StageClaim.objects.filter(run=run).order_by("lease").values_list("outcome", flat=True))
    assert outcomes == ["abandoned", "running"]
    claims.release(current, StageClaim.Outcome.ERROR)


def test_a_heartbeat_outlives_database_and_redis_errors_and_notices_a_lost_lease(run: Run) -> None:
    hold = claim(run)
    failures = [OperationalError("the server closed the connection"), OperationalError("still restarting")]

    def flaky_stamp(run_id: str, lease: int) -> bool:
        if failures:
            raise failures.pop(0)
        return claims.stamp_heartbeat(run_id, lease)

    nothing_there = redis.Redis(host="127.0.0.1", port=9, socket_connect_timeout=0.2)
    broken_lock = RunLock(str(run.pk), "x", client=nothing_there)
    beat = Heartbeat(str(run.pk), hold.lease, broken_lock, hold.lost, flaky_stamp)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=None)
    beat.beat_once()
    beat.beat_once()  # two beats fail on the database, Redis is unreachable: nothing raises, nothing is lost
    assert not hold.lost.is_set() and Run.objects.get(pk=run.pk).heartbeat_at is None
    beat.beat_once()
    assert Run.objects.get(pk=run.pk).heartbeat_at is not None and not hold.lost.is_set()

    take_over(run)
    Heartbeat(str(run.pk), hold.lease, hold.lock, hold.lost, claims.stamp_heartbeat).beat_once()
    assert hold.lost.is_set()  # the lease moved on: the next write of the old holder is refused


def test_the_run_lock_is_refreshed_and_released_only_by_its_owner(run: Run) -> None:
    client = redis.Redis.from_url(settings.REDIS_URL)
    mine, theirs = RunLock(str(run.pk), "mine"), RunLock(str(run.pk), "theirs")
    assert mine.acquire() and not theirs.acquire()
    client.delete(mine.key)  # expired while its owner was paused
    assert theirs.acquire()
    assert not mine.refresh()  # it is someone else's now: no extension, no steal
    mine.release()
    assert client.get(mine.key) == b"theirs"
    client.delete(theirs.key)  # Redis restarted and forgot every key
    assert theirs.refresh() and client.get(theirs.key) == b"theirs"  # the owner takes it back
    theirs.release()
    assert client.get(theirs.key) is None


def test_an_endpoint_that_keeps_failing_ends_the_run_after_a_bounded_number_of_resumes(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: queued.append((run_id, stage)))
    with fake_llm(script_for(run)) as server:
        for _ in range(40):
            server.inject("500", prompt="synthesizer")
        driver.run_inline(str(run.pk))
        run.refresh_from_db()
        assert run.status == Run.Status.RUNNING and run.stage == "synthesis"
        assert "will be resumed (attempt 1 of 3)" in run.status_message
        passes = 0
        while run.status == Run.Status.RUNNING and passes < 10:
            passes += 1
            assert resume_stale_runs(stale_after_s=60) == [str(run.pk)]  # its heartbeat was cleared
            driver.execute_stage(*queued.pop())
            run.refresh_from_db()
    assert run.status == Run.Status.FAILED and passes == 2
    assert run.status_message.startswith(
        "the synthesis stage failed 3 times; the last error: TransientFailure"
    )
    synthesis_claims = StageClaim.objects.filter(run=run, stage="synthesis")
    assert synthesis_claims.count() == settings.RUN_MAX_STAGE_ATTEMPTS == 3
    # Ended for good: the watchdog leaves it alone and a stray job does nothing.
    assert resume_stale_runs(stale_after_s=0) == []
    driver.execute_stage(str(run.pk), "synthesis")
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and synthesis_claims.count() == 3


def test_a_bug_in_a_stage_is_recorded_resumed_and_then_fails_the_run_with_its_reason(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx: StageContext) -> None:
        raise KeyError("a field the stage expected")

    memo = registry.WORKFLOWS["memo"]
    stages = tuple(replace(s, body=broken) if s.name == "data" else s for s in memo.stages)
    monkeypatch.setitem(registry.WORKFLOWS, "memo", replace(memo, stages=stages))
    for _ in range(3):
        driver.execute_stage(str(run.pk), "data")
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert (
        "the data stage failed 3 times" in run.status_message
        and "a field the stage expected" in run.status_message
    )
    assert list(StageClaim.objects.filter(run=run).values_list("outcome", flat=True)) == [
        "error",
        "error",
        "failed",
    ]
    assert set(AgentStep.objects.filter(run=run).values_list("status", flat=True)) == {"skipped"}


def test_a_finished_run_is_never_claimed_again(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert resume_stale_runs(stale_after_s=1) == []
    refused = claims.claim_stage(str(run.pk), "memo", first=False)
    assert isinstance(refused, Refusal) and refused.reason == "the run is done"
    run.refresh_from_db()
    assert run.status == Run.Status.DONE


def test_a_spent_budget_ends_the_run_with_a_status_that_says_so(run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(budget_tokens=1)  # the budget the run started with
    with fake_llm(script_for(run)) as server:
        budgeted = fake_settings(server).model_copy(update={"run_budget_tokens": 1})
        with override_settings(LLM_SETTINGS=budgeted):
            driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.status_message.startswith("the run's token budget is spent, so the specialists stage stopped")
    # Nothing was sent: every specialist's call was refused before it reached the endpoint.
    assert set(run.llm_calls.values_list("outcome", flat=True)) == {"budget"} and server.request_count == 0


def test_a_run_keeps_the_budget_it_started_with_when_the_setting_changes(run: Run) -> None:
    """The budget a run recorded at its start bounds it to its end, resumes included: raising the setting
    afterwards does not lift it."""
    Run.objects.filter(pk=run.pk).update(budget_tokens=1)
    with fake_llm(script_for(run)) as server:
        budgeted = fake_settings(server).model_copy(update={"run_budget_tokens": 10_000_000})
        with override_settings(LLM_SETTINGS=budgeted):
            driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "of its 1 tokens" in run.status_message
    assert server.request_count == 0


def test_a_queued_run_behind_busy_workers_waits_and_one_whose_job_redis_lost_is_enqueued_again(
    run: Run,
) -> None:
    queue = django_rq.get_queue(driver.QUEUE)
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    long_ago = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=run.pk).update(created_at=long_ago)
    driver.enqueue_stage(str(run.pk), "data")  # every worker busy: the job waits in the queue
    assert resume_stale_runs(stale_after_s=60) == []
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and "lost" not in run.status_message
    queue.empty()  # type: ignore[no-untyped-call]  # as after a Redis restart
    assert resume_stale_runs(stale_after_s=60) == [str(run.pk)]
    run.refresh_from_db()
    assert run.status_message == "resuming data after a lost queue entry"
    assert [job.args[0] for job in queue.get_jobs()] == [str(run.pk)]
    queue.empty()  # type: ignore[no-untyped-call]
