"""A person's memo while the desk's weekly screen runs (issues 33, 3 and 34, 5): how long it waited before its
first step and its wall time, against the same memo on an idle desk.

Real worker processes as scripts/run.sh starts them by default but fewer (one for people's runs, one for
scheduled work, which takes people's first), the fake server at ``PRIORITY_LATENCY_MS`` a call (200) in this
process, the desk's default LLM settings (3 slots, 1 kept for people). Three memos, each with its own question
(the ledger answers none of them from another's calls):
- on an idle desk;
- while a scheduled screen of the demo's whole watchlist runs (the desk's own work: its queue, its share);
- while the same screen runs as a person's (no priority: what every scheduled screen was before);
- behind the same screen on a desk of one worker (what a desk with ``RQ_WORKERS=1`` did before).
``scripts/bench.sh -k priority`` runs it; it reports, it never times.
"""

from __future__ import annotations

import os
import time
from functools import partial

import django_rq
import pytest
from django.contrib.auth.models import User

from agents.llm.fakes.server import FakeLLMServer
from memos.models import LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.registry import fake_answers
from memos.pipeline.screen.profiles import default_strategy
from memos.pipeline.screen.universe import default_symbols
from memos.services.runs import ask_watchlist, create_brief, start_run
from tests.bench.conftest import BenchReport
from tests.memos.crash_harness import WORKER, Desk, desk_env, wait_for
from tests.memos.pipeline_support import analyst, load_desk_data, script_for

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]

LATENCY_MS = float(os.environ.get("PRIORITY_LATENCY_MS", "200"))


def _memo(case: str) -> Run:
    user = analyst(f"ana-{case.replace(' ', '-')}")  # one each: a person may have three runs at once
    question = f"Is the buyback funded by operating cash? ({case})"
    brief = create_brief(owner=user, ticker="AAPL", question=question)
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def _screen(question: str, *, scheduled: bool) -> Run:
    strategy = default_strategy()
    return ask_watchlist(
        owner=User.objects.filter(username="desk").first() or analyst("desk"),
        symbols=default_symbols(strategy),
        question=question,
        workflow="screen",
        profile="weekly",
        options={"strategy": strategy.model_dump(mode="json")},
        enqueue=False,
        scheduled=scheduled,
    )


def _has_asked(run: Run, calls: int) -> bool:
    return LLMCall.objects.filter(run=run).count() >= calls


def _finished(run: Run) -> bool:
    return Run.objects.filter(pk=run.pk, status__in=Run.FINISHED_STATUSES).exists()


def _timed(desk: Desk, run: Run) -> dict[str, float]:
    """Queue ``run`` now; seconds until its first step started and until it ended, and its first call's
    wait for a slot (from its stage start to its first call's start at the endpoint)."""
    queued = time.time()
    driver.enqueue_stage(str(run.pk), "data")
    try:
        wait_for(lambda: _finished(run), 300, "the memo to finish")
    except AssertionError as late:
        raise AssertionError(f"{late}\n{desk.log_tails()}") from None
    run.refresh_from_db()
    assert run.started_at is not None and run.finished_at is not None
    calls = LLMCall.objects.filter(run=run).count()
    return {
        "waited_s": round(run.started_at.timestamp() - queued, 2),
        "wall_s": round(run.finished_at.timestamp() - queued, 2),
        "calls": calls,
    }


def test_a_persons_memo_while_the_weekly_screen_runs(bench_report: BenchReport) -> None:
    load_desk_data("AAPL")
    for name in driver.QUEUES:
        django_rq.get_queue(name).empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    cases = ("idle", "scheduled", "person", "one worker")
    memos = [_memo(case) for case in cases]
    with FakeLLMServer(latency_ms=LATENCY_MS, script=script_for(memos[0]), answers=fake_answers()) as server:
        desk = Desk(desk_env(server, LLM_MAX_CONCURRENCY="3", LLM_MAX_RETRIES="3"))
        try:
            for queues in (("default",), ("default", "scheduled")):
                worker = desk.start("rqworker", *queues, "--worker-class", WORKER, "--worker-ttl", "60")
                desk.wait_for_log(worker, "Listening on", timeout=60)
            rows = {"idle desk": _timed(desk, memos[0])}
            for label, memo, scheduled in (
                ("beside the scheduled screen", memos[1], True),
                ("beside the same screen as a person's run (no priority)", memos[2], False),
                ("behind the same screen on one worker (before: RQ_WORKERS=1)", memos[3], False),
            ):
                if memo is memos[3]:
                    desk.stop()
                    desk.processes, desk.logs = [], []
                    worker = desk.start("rqworker", "default", "--worker-class", WORKER, "--worker-ttl", "60")
                    desk.wait_for_log(worker, "Listening on", timeout=60)
                screen = _screen(f"Which symbols moved on their own? ({label})", scheduled=scheduled)
                driver.enqueue_stage(str(screen.pk), "prepare")
                wait_for(partial(_has_asked, screen, 3), 300, "the screen asking the model")
                row = _timed(desk, memo)
                row["screen_still_running"] = not _finished(screen)
                wait_for(partial(_finished, screen), 600, "the screen to finish")
                screen.refresh_from_db()
                assert screen.started_at is not None and screen.finished_at is not None
                row["screen_wall_s"] = round(
                    screen.finished_at.timestamp() - screen.started_at.timestamp(), 2
                )
                row["screen_calls"] = LLMCall.objects.filter(run=screen).count()
                rows[label] = row
        finally:
            desk.stop()
    for label, row in rows.items():
        bench_report.add(f"person's memo at {LATENCY_MS:.0f} ms a call, {label}", **row)
