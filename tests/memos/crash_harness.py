"""Crashing a real run on purpose: the production worker (DeskWorker) and the watchdog command as separate
processes, the fake OpenAI-compatible server in this one, a kill -9 of the worker and its work-horse in the
middle of a chosen stage, then a fresh worker that must finish the run.

Where the kill lands: in a stage that calls the LLM, when the fake server has a call of that stage in flight
(and, for the specialists, after the first answers were recorded, so some are paid and some are not); in a
stage that calls no LLM (data, memo), the test holds a row lock on the stage's step, waits until the stage's
worker is blocked on it inside its transaction, and kills it there.

Used by the default suite (one kill per stage) and by the soak benchmark (tests/bench, scripts/soak.sh).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import django_rq
import psycopg
from django.db import connection
from django.db.models import Count

from agents.llm.fakes.server import FakeLLMServer
from agents.llm.hashing import request_hash
from agents.llm.types import Message
from memos.models import AgentStep, LLMCall, Run, StageClaim
from memos.pipeline import driver
from memos.pipeline.gateway import endpoints
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief, start_run
from tests.conftest import ROOT
from tests.memos.pipeline_support import analyst, fake_settings, load_desk_data, script_for

STAGES = ("data", "specialists", "synthesis", "evaluation", "memo")
LLM_STAGES = {"specialists": "specialist_", "synthesis": "synthesizer", "evaluation": "evaluator"}
LATENCY_MS = 1000
STALE_AFTER_S = 3
WORKER = "memos.pipeline.worker.DeskWorker"
LOGS = ROOT / "var" / "crash" / str(os.getpid())  # each process's output, overwritten by the next test


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def desk_env(server: FakeLLMServer, **extra: str) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "LLM_BASE_URL": server.url,
        "LLM_API_KEY": "test-key",
        "LLM_MODEL": "fake-synthesizer",
        "LLM_MODEL_EVALUATOR": "fake-evaluator",
        "LLM_MAX_RETRIES": "1",
        "LLM_MAX_CONCURRENCY": "2",  # two of three specialists in flight, one waiting
        "RUN_HEARTBEAT_S": "1",
        "RUN_STALE_AFTER_S": str(STALE_AFTER_S),
        "PYTHONUNBUFFERED": "1",
        # A worker prints its versions' PDFs as in production: after the run is finished and its claim
        # closed, on its printer thread (memos.services.version_files), never between the two.
        "PRINT_INLINE": "false",
        **extra,
    }


def children(pid: int) -> list[int]:
    found = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False
    )
    return [int(line) for line in found.stdout.split()]


@dataclass
class Desk:
    """The worker and watchdog processes of one test, started by it and stopped by their PIDs."""

    env: dict[str, str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        LOGS.mkdir(parents=True, exist_ok=True)
        log = LOGS / f"{args[0]}-{len(self.processes)}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "manage.py", *args],
                cwd=ROOT,
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(process)
        self.logs.append(log)
        return process

    def log_of(self, process: subprocess.Popen[bytes]) -> str:
        return self.logs[self.processes.index(process)].read_text(errors="replace")

    def wait_for_log(
        self, process: subprocess.Popen[bytes], text: str, *, times: int = 1, timeout: float
    ) -> None:
        """Until ``process``'s log says ``text`` (``times`` times), or fail with every log's end (at once
        if the process exits first)."""

        def said() -> bool:
            if self.log_of(process).count(text) >= times:
                return True
            if process.poll() is not None:
                raise AssertionError(f"it exited with {process.returncode} before saying {text!r}")
            return False

        try:
            wait_for(said, timeout, f"{text!r} in its log")
        except AssertionError as late:
            raise AssertionError(f"{late}\n{self.log_tails()}") from None

    def wait_until_finished(self, run: Run, timeout: float, what: str = "the resumed run to finish") -> None:
        """Until ``run`` has finished, or fail with every process's log's end."""
        try:
            wait_for(lambda: _finished(run), timeout, what)
        except AssertionError as stuck:
            raise AssertionError(f"{stuck}\n{self.log_tails()}") from None

    def log_tails(self) -> str:
        """The end of every process's log: what a failing assertion shows."""
        return "\n".join(f"== {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in self.logs)

    def worker(self) -> subprocess.Popen[bytes]:
        # People's runs first, then the desk's scheduled work, as run.sh's SCHEDULED_WORKERS.
        return self.start("rqworker", "default", "scheduled", "--worker-class", WORKER, "--worker-ttl", "60")

    def watchdog(self) -> subprocess.Popen[bytes]:
        return self.start("watchdog", "--every", "0.5", "--stale-after", str(STALE_AFTER_S))

    def kill(self, worker: subprocess.Popen[bytes]) -> None:
        # The work-horse calls setpgrp(): killing the worker (or its group) would leave it running the job.
        for pid in [*children(worker.pid), worker.pid]:
            os.kill(pid, signal.SIGKILL)
        worker.wait(timeout=10)

    def stop(self) -> None:
        """Every process this desk started, each on its own: one that resists must not leave the rest."""
        for process in reversed(self.processes):
            if process.poll() is not None:
                continue
            for child in children(process.pid):  # a work-horse still on a job
                with contextlib.suppress(ProcessLookupError):  # it may end on its own meanwhile
                    os.kill(child, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                process.kill()
                process.wait(timeout=10)


@contextmanager
def running_desk(server: FakeLLMServer) -> Iterator[Desk]:
    desk = Desk(desk_env(server))
    try:
        yield desk
    finally:
        desk.stop()


@contextmanager
def row_lock(step: AgentStep) -> Iterator[psycopg.Connection[Any]]:
    """Hold a lock on ``step``'s row from another connection, as a stand-in for a slow stage."""
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=False
    ) as holder:
        holder.execute("SELECT id FROM memos_agentstep WHERE id = %s FOR UPDATE", [step.pk])
        try:
            yield holder
        finally:
            holder.rollback()


def someone_waits_on(holder: psycopg.Connection[Any]) -> bool:
    """Whether a session waits on a lock ``holder`` holds. Not any ungranted lock in pg_locks: that view is
    the whole cluster's, where the tests of other parallel workers wait on locks of their own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [holder.info.backend_pid],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


@dataclass
class CrashReport:
    stage: str
    status: str
    message: str
    ok_before_kill: set[str]  # request hashes whose answers were recorded before the kill
    received: dict[str, int]  # requests received per hash, over the whole run
    repeated: int  # requests received more than once (the calls in flight at the kill)
    paid_twice: int  # hashes with two "ok" ledger rows, or recorded before the kill and asked again
    duplicated_steps: int
    claims: list[tuple[str, str]]  # (stage, outcome) in lease order


def new_run(label: str) -> Run:
    user = analyst(f"crash-{label}")
    brief = create_brief(owner=user, ticker="AAPL", question=f"{label}: is the margin story intact?")
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def crash_and_resume(
    stage: str, *, label: str = "interrupted", timeout: float = 90
) -> tuple[Run, CrashReport]:
    """Start a quick run, kill its worker in ``stage``, let the watchdog and a new worker finish it."""
    run = new_run(label)
    queue = django_rq.get_queue("default")
    queue.empty()  # type: ignore[no-untyped-call]  # jobs another test left must not reach this test's workers
    with (
        FakeLLMServer(latency_ms=LATENCY_MS, script=script_for(run), answers=fake_answers()) as server,
        running_desk(server) as desk,
    ):
        desk.watchdog()
        worker = desk.worker()
        if stage in LLM_STAGES:
            driver.enqueue_stage(str(run.pk), "data")
            _wait_for_call_in_flight(run, server, stage)
            ok_before = _ok_hashes(run)
            desk.kill(worker)
        else:
            step = AgentStep.objects.get(run=run, stage=stage)
            with row_lock(step) as holder:
                driver.enqueue_stage(str(run.pk), "data")
                wait_for(lambda: _claimed(run, stage) and someone_waits_on(holder), 60, f"{stage} blocked")
                ok_before = _ok_hashes(run)
                desk.kill(worker)
        desk.worker()  # the replacement; the watchdog queues the run again once its heartbeat is stale
        try:
            wait_for(lambda: _finished(run), timeout, "the resumed run to finish")
        except AssertionError as stuck:
            run.refresh_from_db()
            raise AssertionError(
                f"{stuck}; the run: {run.status} {run.status_message}\n{desk.log_tails()}"
            ) from None
        received = received_requests(server)
    run.refresh_from_db()
    return run, _report(run, stage, ok_before, dict(received))


def _claimed(run: Run, stage: str) -> bool:
    return StageClaim.objects.filter(run=run, stage=stage, outcome=StageClaim.Outcome.RUNNING).exists()


def _finished(run: Run) -> bool:
    return Run.objects.filter(pk=run.pk, status__in=Run.FINISHED_STATUSES).exists()


def _ok_hashes(run: Run) -> set[str]:
    return set(LLMCall.objects.filter(run=run, outcome="ok").values_list("request_hash", flat=True))


def _wait_for_call_in_flight(run: Run, server: FakeLLMServer, stage: str) -> None:
    prefix = LLM_STAGES[stage]

    def in_flight_of_stage() -> bool:
        if Run.objects.filter(pk=run.pk).values_list("stage", flat=True).first() != stage:
            return False
        asked = [entry for entry in server.requests if entry["prompt_name"].startswith(prefix)]
        answered = LLMCall.objects.filter(run=run, stage=stage, outcome="ok").count()
        # Specialists: kill after some answers were recorded and while another is still out.
        enough = answered >= 1 if stage == "specialists" else True
        return enough and server.in_flight >= 1 and len(asked) > answered

    wait_for(in_flight_of_stage, 60, f"a {stage} call in flight")


def received_requests(server: Any) -> Counter[str]:
    """How often each request reached the fake server whole, by ledger hash. A request the kill cut before
    its body arrived is recorded with an empty body: it reached no model, so it is no call."""
    return Counter(ledger_hash(server.url, e["body"]) for e in server.requests if e["body"])


def ledger_hash(base_url: str, body: dict[str, Any]) -> str:
    """The gateway's request hash (its cache key) of a request the fake server at ``base_url`` received."""
    return request_hash(
        base_url=base_url,
        model=body["model"],
        messages=[Message(role=m["role"], content=m["content"]) for m in body["messages"]],
        json_schema=body["response_format"]["json_schema"]["schema"],
        temperature=body["temperature"],
        max_tokens=body["max_tokens"],
    )


def _report(run: Run, stage: str, ok_before: set[str], received: dict[str, int]) -> CrashReport:
    """What the wire and the rows say: ``received`` counts requests at the fake server per request hash."""
    twice_in_ledger = set(
        LLMCall.objects.filter(run=run, outcome="ok")
        .values("request_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("request_hash", flat=True)
    )
    asked_again = {h for h in ok_before if received.get(h, 0) > 1}
    repeated = sum(1 for count in received.values() if count > 1)
    duplicated = (
        AgentStep.objects.filter(run=run)
        .values("stage", "key")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    claims = list(StageClaim.objects.filter(run=run).order_by("lease").values_list("stage", "outcome"))
    return CrashReport(
        stage=stage,
        status=run.status,
        message=run.status_message,
        ok_before_kill=ok_before,
        received=received,
        repeated=repeated,
        paid_twice=len(twice_in_ledger | asked_again),
        duplicated_steps=duplicated,
        claims=claims,
    )


def reference_memo() -> dict[str, Any]:
    """The memo of an uninterrupted run given the same scripted answers, run in this process."""
    run = new_run("uninterrupted")
    with (
        FakeLLMServer(script=script_for(run), answers=fake_answers()) as server,
        endpoints(fake_settings(server)),
    ):
        driver.run_inline(str(run.pk))
    return AgentStep.objects.get(run=run, kind="memo").output or {}


__all__ = ["STAGES", "CrashReport", "crash_and_resume", "load_desk_data", "reference_memo"]
