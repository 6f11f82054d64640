"""Moves debated across worker processes (seed 004's sandbox as RQ shards): two workers share a run's moves,
a kill -9 of either loses no completed turn and pays for none twice, and the run ranks as an uninterrupted
one does. The workers, the watchdog and the fake OpenAI-compatible server are real processes and sockets
(tests.memos.crash_harness)."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise
from typing import Any

import django_rq
import pytest
from django.db.models import Count, Max

from agents.llm.fakes.server import FakeLLMServer
from memos.models import AgentStep, DebateTurn, LLMCall, Move, Run, StageClaim
from memos.pipeline import driver
from memos.pipeline.gateway import endpoints
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief
from tests.memos.agency.support import start_agency
from tests.memos.crash_harness import Desk, children, desk_env, received_requests, wait_for
from tests.memos.pipeline_support import analyst, fake_settings, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

LATENCY_MS = 150


def _run(label: str, *, rounds: int, sequential: bool = False) -> Run:
    user = analyst(f"agency-{label}")
    brief = create_brief(owner=user, ticker="AAPL", question=f"{label}: which moves should the company make?")
    run = start_agency(brief, user, "quick", personas=("capital", "competition"), rounds=rounds)
    if sequential:  # AGENCY_SEQUENTIAL_MOVES, as configure() reads it
        Run.objects.filter(pk=run.pk).update(config={**run.config, "sequential": True})
        run.refresh_from_db()
    return run


def _ranking(run: Run) -> list[tuple[str, int]]:
    output = AgentStep.objects.get(run=run, key="ranking").output
    assert isinstance(output, dict)
    return [(row["move_id"], row["total"]) for row in output["ranked"]]


def _uninterrupted(rounds: int, label: str = "reference", **options: Any) -> Run:
    """An uninterrupted run, in this process."""
    run = _run(label, rounds=rounds, **options)
    with (
        FakeLLMServer(latency_ms=20, answers=fake_answers()) as server,
        endpoints(fake_settings(server, concurrency=6)),
    ):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    return run


def _reference(rounds: int) -> list[tuple[str, int]]:
    return _ranking(_uninterrupted(rounds))


def _spans(run: Run) -> list[tuple[datetime, datetime]]:
    """Each debated move's first and last row, in the order the moves were proposed."""
    spans = []
    for move in Move.objects.filter(run=run, merged_into="").order_by("number"):
        stamps = [
            *move.turns.values_list("created_at", flat=True),
            *move.scores.values_list("created_at", flat=True),
        ]
        spans.append((min(stamps), max(stamps)))
    return spans


def _protocol_holds(run: Run) -> None:
    rounds = run.config["rounds"]
    counts = set(
        Move.objects.filter(run=run, merged_into="").annotate(n=Count("turns")).values_list("n", flat=True)
    )
    assert counts == {1 + 3 + 6 * (rounds - 1)}
    # No answer was paid for twice: one "ok" ledger row per request.
    twice = (
        LLMCall.objects.filter(run=run, outcome="ok")
        .values("request_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not twice.exists()


def _desk(server: FakeLLMServer, **extra: str) -> Desk:
    django_rq.get_queue("default").empty()  # type: ignore[no-untyped-call]  # no other test's jobs
    return Desk(desk_env(server, LLM_MAX_CONCURRENCY="6", **extra))


def _stop(desk: Desk) -> None:
    """Stop the desk's processes, and forget the jobs they leave: a job a killed worker held would be counted
    failed by the next worker that cleans the registries (another test's)."""
    desk.stop()
    queue = django_rq.get_queue("default")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    queue.connection.delete(queue.started_job_registry.key)  # rq 3 removes no single entry from it
    # Dropped whole, like the started registry: deleting a killed job one by one asks rq for its executions,
    # and one whose key expired with the killed worker raises ("Execution ... not found in Redis").
    queue.connection.delete(queue.failed_job_registry.key)


def test_two_workers_share_the_moves_and_a_kill_of_one_loses_no_completed_turn() -> None:
    load_desk_data("AAPL")
    rounds = 4
    reference = _reference(rounds)
    run = _run("two-workers", rounds=rounds)
    with FakeLLMServer(latency_ms=LATENCY_MS, answers=fake_answers()) as server:
        desk = _desk(server, AGENCY_MOVES_PER_WORKER="1")
        try:
            desk.watchdog()
            first, second = desk.worker(), desk.worker()
            driver.enqueue_stage(str(run.pk), "sources")
            turns = DebateTurn.objects.filter(move__run=run)
            wait_for(lambda: turns.values("worker").distinct().count() >= 2, 90, "turns from two workers")
            holder_horse = int(
                StageClaim.objects.get(run=run, stage="sandbox", outcome="running").worker.split(":")[1]
            )
            helper = second if holder_horse in children(first.pid) else first
            helper_name = next(
                w for w in turns.values_list("worker", flat=True).distinct() if w.endswith(f":{helper.pid}")
            )
            wait_for(lambda: turns.filter(worker=helper_name).count() >= 4, 60, "the helper to write turns")
            before = {t.pk: (t.text, t.request_hash) for t in turns.filter(worker=helper_name)}
            desk.kill(helper)
            wait_for(
                lambda: Run.objects.get(pk=run.pk).status in Run.FINISHED_STATUSES, 120, "the run to finish"
            )
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{desk.log_tails()}") from None
        finally:
            _stop(desk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    # Moves spread across both workers, and every turn the killed one wrote is still there, unchanged.
    assert turns.values("worker").distinct().count() >= 2
    after = {t.pk: (t.text, t.request_hash) for t in turns.filter(pk__in=before)}
    assert after == before
    _protocol_holds(run)
    assert _ranking(run) == reference


def test_a_kill_of_the_stage_holder_at_round_five_resumes_from_the_turns_and_ranks_the_same() -> None:
    load_desk_data("AAPL")
    rounds = 6
    reference = _reference(rounds)
    run = _run("holder-killed", rounds=rounds)
    with FakeLLMServer(latency_ms=LATENCY_MS, answers=fake_answers()) as server:
        desk = _desk(server)
        try:
            desk.watchdog()
            worker = desk.worker()
            driver.enqueue_stage(str(run.pk), "sources")
            turns = DebateTurn.objects.filter(move__run=run)
            wait_for(lambda: (turns.aggregate(r=Max("round"))["r"] or 0) >= 5, 120, "a debate at round five")
            paid = set(LLMCall.objects.filter(run=run, outcome="ok").values_list("request_hash", flat=True))
            written = turns.count()
            desk.kill(worker)
            desk.worker()
            wait_for(
                lambda: Run.objects.get(pk=run.pk).status in Run.FINISHED_STATUSES, 180, "the resumed run"
            )
            received = received_requests(server)
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{desk.log_tails()}") from None
        finally:
            _stop(desk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert written > 0 and turns.count() > written
    # Nothing answered before the kill was asked again; the ledger has one answer per request.
    assert not [h for h in paid if received[h] > 1]
    _protocol_holds(run)
    assert _ranking(run) == reference
    claims = list(
        StageClaim.objects.filter(run=run, stage="sandbox")
        .order_by("lease")
        .values_list("outcome", flat=True)
    )
    assert claims == ["abandoned", "finished"]


def test_one_move_at_a_time_ranks_exactly_as_the_concurrent_run() -> None:
    load_desk_data("AAPL")
    concurrent = _uninterrupted(3)
    sequential = _uninterrupted(3, "one-at-a-time", sequential=True)
    assert _ranking(sequential) == _ranking(concurrent)
    # The seed's order: each move's debate ends before the next one's begins; concurrently, they overlap.
    spans = _spans(sequential)
    assert all(earlier[1] < later[0] for earlier, later in pairwise(spans))
    spans = _spans(concurrent)
    assert all(first[0] < second[1] and second[0] < first[1] for first, second in pairwise(spans))
