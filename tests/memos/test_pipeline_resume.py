"""Nothing is lost: a worker and its work-horse killed in the middle of the specialists stage; the watchdog
re-enqueues the run, a new worker finishes it, no completed LLM call is paid for twice, and the memo is the
same as an uninterrupted run's with the same answers. Real RQ worker processes, the real openai client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import django_rq
import pytest
from django.db import connection
from django.db.models import Count
from django.test import override_settings

from agents.llm.fakes.server import FakeLLMServer
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import runner
from memos.services.runs import create_brief, resume_stale_runs, start_run
from tests.conftest import ROOT
from tests.memos.pipeline_support import analyst, fake_settings, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)

LATENCY_MS = 1500  # long enough to kill the worker while specialists are in flight
STALE_AFTER_S = 3


def _env(server: FakeLLMServer) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "LLM_BASE_URL": server.url,
        "LLM_API_KEY": "test-key",
        "LLM_MODEL": "fake-synthesizer",
        "LLM_MODEL_EVALUATOR": "fake-evaluator",
        "LLM_MAX_RETRIES": "1",
        "LLM_MAX_CONCURRENCY": "2",  # two of three specialists in flight, one waiting, when the worker dies
        "RUN_HEARTBEAT_S": "1",
        "RUN_STALE_AFTER_S": str(STALE_AFTER_S),
    }


def _worker(env: dict[str, str], *, burst: bool) -> subprocess.Popen[str]:
    args = [sys.executable, "manage.py", "rqworker", "default", "--worker-ttl", "60"]
    return subprocess.Popen(
        args + (["--burst"] if burst else []),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        # Only the finishing worker's errors are read; a killed worker's pipe would be left unread.
        stderr=subprocess.PIPE if burst else subprocess.DEVNULL,
        text=True,
    )


def _children(pid: int) -> list[int]:
    found = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False
    )
    return [int(line) for line in found.stdout.split()]


def _kill_worker_and_horse(worker: subprocess.Popen[str]) -> None:
    # The work-horse calls setpgrp(): killing the worker (or its group) would leave it running the job.
    for pid in [*_children(worker.pid), worker.pid]:
        os.kill(pid, signal.SIGKILL)
    worker.wait(timeout=10)


def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def queue() -> Iterator[Any]:
    q = django_rq.get_queue("default")
    q.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    yield q
    q.empty()  # type: ignore[no-untyped-call]


def test_a_killed_worker_mid_specialists_loses_nothing_and_pays_for_nothing_twice(queue: Any) -> None:
    load_desk_data("AAPL")
    user = analyst()
    interrupted = start_run(
        create_brief(owner=user, ticker="AAPL", question="Interrupted: is the margin story intact?"),
        user=user,
        profile="quick",
        enqueue=False,
    )
    script = script_for(interrupted)
    with FakeLLMServer(latency_ms=LATENCY_MS, script=script) as server:
        env = _env(server)
        runner.enqueue_stage(str(interrupted.pk), "data")
        worker = _worker(env, burst=False)
        try:
            # Wait until the specialists are in flight: at least one call sent, none of the stage finished.
            _wait_for(lambda: server.request_count >= 1, 60, "the first specialist call")
            time.sleep(LATENCY_MS / 1000 * 1.3)  # the first calls complete and are recorded
            completed_before = LLMCall.objects.filter(run=interrupted, outcome="ok").count()
            _kill_worker_and_horse(worker)
        finally:
            if worker.poll() is None:
                worker.kill()
        interrupted.refresh_from_db()
        assert interrupted.stage == "specialists" and interrupted.status == Run.Status.RUNNING
        assert 1 <= completed_before < 3, "the kill should land between the first and the last specialist"

        # The watchdog sees the heartbeat go stale, and the lock the dead worker held expires with it.
        time.sleep(STALE_AFTER_S + 1)
        assert resume_stale_runs(stale_after_s=STALE_AFTER_S) == [str(interrupted.pk)]
        finisher = _worker(env, burst=True)
        _, errors = finisher.communicate(timeout=180)
        assert finisher.returncode == 0, errors

        interrupted.refresh_from_db()
        assert interrupted.status == Run.Status.DONE, interrupted.status_message
        paid_twice = (
            LLMCall.objects.filter(run=interrupted, outcome="ok")
            .values("request_hash")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        assert not paid_twice.exists()
        assert (
            LLMCall.objects.filter(run=interrupted, outcome="ok").count() == 5
        )  # 3 specialists, 1 iteration, 1 evaluation

        reference = start_run(
            create_brief(owner=user, ticker="AAPL", question="Uninterrupted: is the margin story intact?"),
            user=user,
            profile="quick",
            enqueue=False,
        )
        server.reset()  # the same scripted answers, from the start, for the uninterrupted run
        with override_settings(LLM_SETTINGS=fake_settings(server)):
            runner.run_inline(str(reference.pk))

    memo = AgentStep.objects.get(run=interrupted, key="memo").output or {}
    expected = AgentStep.objects.get(run=reference, key="memo").output or {}
    assert memo == expected
