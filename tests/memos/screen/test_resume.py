"""Nothing is lost in a screen run: the worker and its work-horse killed (SIGKILL) in the middle of the news
analysis, with some sectors' readings paid for and another's call in flight. The watchdog queues the run
again, a new worker finishes it, and no answer recorded before the kill is asked for again."""

from __future__ import annotations

import django_rq
import pytest
from django.db.models import Count

from agents.llm.fakes.server import FakeLLMServer
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.registry import fake_answers
from tests.memos.crash_harness import LATENCY_MS, Desk, desk_env, received_requests, wait_for
from tests.memos.screen.test_screen_run import _screen

pytestmark = pytest.mark.django_db(transaction=True)

# Four sectors: with three calls at once, some readings finish while others are still in flight.
SYMBOLS = ["XOM", "CVX", "DUK", "NEE", "JPM", "BAC", "JNJ", "PFE"]


def _news_in_flight(run: Run, server: FakeLLMServer) -> bool:
    paid = LLMCall.objects.filter(run=run, stage="news", outcome="ok").exists()
    asked = [e for e in server.requests if e["prompt_name"].startswith("screen_news") and not e["completed"]]
    return paid and bool(asked) and server.in_flight >= 1


def test_a_screen_worker_killed_mid_news_analysis_resumes_without_paying_twice() -> None:
    run = _screen(SYMBOLS)
    django_rq.get_queue("default").empty()  # type: ignore[no-untyped-call]
    with FakeLLMServer(latency_ms=LATENCY_MS, answers=fake_answers()) as server:
        desk = Desk(desk_env(server))
        try:
            desk.watchdog()
            worker = desk.worker()
            driver.enqueue_stage(str(run.pk), "prepare")
            wait_for(lambda: _news_in_flight(run, server), 120, "a news reading in flight after one was paid")
            paid_before = set(
                LLMCall.objects.filter(run=run, outcome="ok").values_list("request_hash", flat=True)
            )
            desk.kill(worker)
            desk.worker()
            desk.wait_until_finished(run, 180, "the resumed run to finish")
            received = received_requests(server)
        finally:
            desk.stop()
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert paid_before, "the kill should land after some calls were paid for"
    assert not [h for h in paid_before if received[h] > 1], (
        "an answer recorded before the kill was asked again"
    )
    twice = (
        LLMCall.objects.filter(run=run, outcome="ok")
        .values("request_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not twice.exists()
    keys = list(AgentStep.objects.filter(run=run).values_list("stage", "key"))
    assert len(keys) == len(set(keys))
    assert AgentStep.objects.filter(run=run, key="flags", status="done").exists()
