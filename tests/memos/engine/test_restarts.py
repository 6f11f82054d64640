"""Nothing is lost when the servers restart under a running run.

Private PostgreSQL and Redis servers of this test's own (the suite's shared ones are never restarted), two
production workers (DeskWorker), the watchdog command and the fake OpenAI-compatible server. Redis is
restarted while the specialists' calls are in flight (it keeps nothing on disk: queues, locks and limiter
slots are all forgotten), then PostgreSQL while a synthesis call is in flight (every connection is cut). The
run must finish DONE, every request must reach the fake server exactly once, and no stage may ever have
been held by two workers at once.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue

from agents.llm.fakes.server import FakeLLMServer
from memos.pipeline.registry import fake_answers
from tests.conftest import ROOT
from tests.memos.crash_harness import Desk, ledger_hash, wait_for
from tests.private_services import PrivatePostgres, PrivateRedis

LATENCY_MS = 1500
STALE_AFTER_S = 4
OUTAGE_S = 6
REDIS_UNREACHABLE = "Redis is unreachable"  # DeskWorker's warning each time it waits for Redis


@pytest.fixture
def state_dir() -> Iterator[Path]:
    # Under /var/tmp, not pytest's tmp_path: the postgres user must be able to reach the cluster's folder.
    path = Path(tempfile.mkdtemp(prefix="analyst-desk-restart-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def servers(state_dir: Path) -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    (state_dir / "pg").mkdir()
    (state_dir / "redis").mkdir()
    postgres, redis_server = PrivatePostgres(state_dir / "pg"), PrivateRedis(state_dir / "redis")
    postgres.start()
    redis_server.start()
    try:
        postgres.create_database()
        yield postgres, redis_server
    finally:
        redis_server.stop()
        postgres.stop()


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# The set-up of a run, in one process of the desk's against the private database (each process of its own
# would start Django again, seconds each): the migrated database, the demo users, the data a run needs, a
# quick run queued by ``analyze``, and the rehearsal's answers for it. Prints them as JSON.
PREPARE = """
import io
import json
from django.core.management import call_command
from memos.models import Run
from memos.pipeline.memo.rehearsal import script_for_run
from tests.memos.pipeline_support import load_desk_data

call_command("migrate", "--noinput", stdout=io.StringIO())
call_command("bootstrap_demo", "--no-data", stdout=io.StringIO())
load_desk_data("AAPL")
said = io.StringIO()
question = "Does the cash cycle fund the buyback?"
call_command("analyze", "AAPL", "--brief", question, "--profile", "quick", stdout=said)
run = Run.objects.get(pk=said.getvalue().split()[1])
print(json.dumps({{"run": str(run.pk), "script": script_for_run(run, repeats={repeats})}}))
"""


def fetch(postgres: PrivatePostgres, query: str, *params: object) -> list[tuple[Any, ...]]:
    with postgres.connect() as db:
        return list(db.execute(query, params).fetchall())


def call_in_flight(server: FakeLLMServer, prefix: str) -> Callable[[], bool]:
    def check() -> bool:
        asked = [e for e in server.requests if e["prompt_name"].startswith(prefix)]
        return server.in_flight >= 1 and any(not e.get("completed") for e in asked)

    return check


def desk_env(postgres: PrivatePostgres, redis_server: PrivateRedis, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": postgres.url,
        "REDIS_URL": redis_server.url,
        "LLM_MAX_RETRIES": "1",
        "LLM_MAX_CONCURRENCY": "2",
        "RUN_HEARTBEAT_S": "1",
        "RUN_STALE_AFTER_S": str(STALE_AFTER_S),
        "PYTHONUNBUFFERED": "1",
        # A worker prints its versions' PDFs as in production: after the run is finished and its claim
        # closed, on its printer thread (memos.services.version_files), never between the two.
        "PRINT_INLINE": "false",
        **extra,
    }


def queued_quick_run(env: dict[str, str], *, repeats: int = 1) -> tuple[str, dict[str, list[Any]]]:
    """A migrated database with the data a run needs, a quick run queued by ``analyze``, and the
    rehearsal's answers for it, each ``repeats`` times: (run id, script)."""
    said = manage(env, "shell", "--no-imports", "-c", PREPARE.format(repeats=repeats))
    prepared = json.loads(said.strip().splitlines()[-1])
    return prepared["run"], prepared["script"]


def with_endpoint(env: dict[str, str], server: FakeLLMServer) -> dict[str, str]:
    return env | {
        "LLM_BASE_URL": server.url,
        "LLM_API_KEY": "test-key",
        "LLM_MODEL": "fake-synthesizer",
        "LLM_MODEL_EVALUATOR": "fake-evaluator",
    }


def stage_is(postgres: PrivatePostgres, run_id: str, name: str) -> Callable[[], bool]:
    return lambda: fetch(postgres, "SELECT stage FROM memos_run WHERE id = %s", run_id)[0][0] == name


def finished(postgres: PrivatePostgres, run_id: str) -> Callable[[], bool]:
    active = ("queued", "running")
    return lambda: fetch(postgres, "SELECT status FROM memos_run WHERE id = %s", run_id)[0][0] not in active


def test_a_run_survives_a_redis_restart_and_a_postgres_restart_paying_for_each_call_once(
    servers: tuple[PrivatePostgres, PrivateRedis],
) -> None:
    postgres, redis_server = servers
    env = desk_env(postgres, redis_server)
    run_id, script = queued_quick_run(env)
    with FakeLLMServer(latency_ms=LATENCY_MS, script=script, answers=fake_answers()) as server:
        desk = Desk(with_endpoint(env, server))
        try:
            desk.watchdog()
            desk.worker()
            desk.worker()

            wait_for(stage_is(postgres, run_id, "specialists"), 60, "the specialists stage")
            wait_for(call_in_flight(server, "specialist_"), 30, "a specialist call in flight")
            redis_server.restart()

            wait_for(stage_is(postgres, run_id, "synthesis"), 90, "the synthesis stage")
            wait_for(call_in_flight(server, "synthesizer"), 30, "a synthesis call in flight")
            postgres.restart()

            wait_for(finished(postgres, run_id), 120, "the run to finish")
            workers_alive = [p.poll() is None for p in desk.processes]
        finally:
            desk.stop()
        received = Counter(ledger_hash(server.url, entry["body"]) for entry in server.requests)

    status, message = fetch(postgres, "SELECT status, status_message FROM memos_run WHERE id = %s", run_id)[0]
    assert status == "done", message
    # Every call reached the endpoint once: nothing in flight at a restart was lost or asked again.
    assert received and max(received.values()) == 1, received
    ok = fetch(postgres, "SELECT request_hash, count(*) FROM memos_llmcall WHERE outcome = 'ok' GROUP BY 1")
    assert {h for h, _ in ok} == set(received) and all(n == 1 for _, n in ok)
    # No stage was held by two workers at once: each claim was released before the next one was made.
    claims = fetch(
        postgres,
        "SELECT stage, lease, claimed_at, released_at, outcome FROM memos_stageclaim"
        " WHERE run_id = %s ORDER BY lease",
        run_id,
    )
    assert [stage for stage, *_ in claims] == ["data", "specialists", "synthesis", "evaluation", "memo"], (
        claims
    )
    assert all(outcome == "finished" for *_, outcome in claims), claims
    for (_, _, _, released, _), (_, _, next_claimed, _, _) in itertools.pairwise(claims):
        assert released is not None and released <= next_claimed
    # Both workers and the watchdog lived through both restarts (run.sh stops the desk if one of them exits).
    assert all(workers_alive), workers_alive


def test_a_database_down_longer_than_run_db_outage_s_gives_the_paid_answer_up_and_the_run_resumes(
    servers: tuple[PrivatePostgres, PrivateRedis],
) -> None:
    """README, RUN_DB_OUTAGE_S: how long a stage waits for PostgreSQL before a write (a paid LLM answer)
    gives up. Longer than that, the stage's attempt ends in an error; the watchdog resumes it once the
    database is back, and the answer that could not be written is asked for again."""
    postgres, redis_server = servers
    env = desk_env(postgres, redis_server, RUN_DB_OUTAGE_S=str(OUTAGE_S))
    run_id, script = queued_quick_run(env, repeats=2)  # the answer given up is asked for again
    with FakeLLMServer(latency_ms=LATENCY_MS, script=script, answers=fake_answers()) as server:
        desk = Desk(with_endpoint(env, server))
        try:
            desk.watchdog()
            worker = desk.worker()
            wait_for(stage_is(postgres, run_id, "synthesis"), 90, "the synthesis stage")
            wait_for(call_in_flight(server, "synthesizer"), 30, "a synthesis call in flight")
            postgres.stop()
            down = time.monotonic()
            # The answer arrives while the database is down: its ledger write waits, then gives up.
            desk.wait_for_log(worker, "database unavailable while recording an LLM call", timeout=30)
            desk.wait_for_log(worker, "the synthesis stage raised", timeout=OUTAGE_S + 60)
            gave_up_after = time.monotonic() - down
            postgres.start()
            wait_for(finished(postgres, run_id), 120, "the run to finish")
            log = desk.log_of(worker)
        finally:
            desk.stop()
        synthesis = [
            ledger_hash(server.url, entry["body"])
            for entry in server.requests
            if entry["prompt_name"] == "synthesizer"
        ]

    status, message = fetch(postgres, "SELECT status, status_message FROM memos_run WHERE id = %s", run_id)[0]
    assert status == "done", message
    # It waited the whole allowance (from the answer's arrival, at most one call after the stop), no longer.
    assert OUTAGE_S <= gave_up_after < OUTAGE_S + LATENCY_MS / 1000 + 10, gave_up_after
    assert "OperationalError" in log
    # The attempt that gave up ended in an error and was resumed (a second claim of the stage finished it).
    claims = fetch(
        postgres,
        "SELECT outcome, error FROM memos_stageclaim WHERE run_id = %s AND stage = %s ORDER BY lease",
        run_id,
        "synthesis",
    )
    assert [outcome for outcome, _ in claims] == ["error", "finished"], claims
    # The claim says it in words (it reaches the run page); the database's own message is in the log.
    assert claims[0][1] == "the database could not be reached; the details are in the server log", claims
    # The answer given up was paid for and asked again: one request twice at the wire, recorded once.
    assert len(synthesis) == 2 and synthesis[0] == synthesis[1], synthesis
    ok = fetch(
        postgres,
        "SELECT count(*) FROM memos_llmcall WHERE request_hash = %s AND outcome = 'ok'",
        synthesis[0],
    )
    assert ok == [(1,)], ok


def test_a_worker_started_while_redis_is_down_waits_for_it_and_then_works(
    servers: tuple[PrivatePostgres, PrivateRedis],
) -> None:
    postgres, redis_server = servers
    env = {**os.environ, "DATABASE_URL": postgres.url, "REDIS_URL": redis_server.url, "PYTHONUNBUFFERED": "1"}
    manage(env, "migrate", "--noinput")
    redis_server.stop()
    desk = Desk(env)
    try:
        worker = desk.worker()
        # It met the closed port twice, waiting in between: RQ's own worker exits at the first, and run.sh
        # with it.
        desk.wait_for_log(worker, REDIS_UNREACHABLE, times=2, timeout=60)
        assert worker.poll() is None, desk.log_tails()
        redis_server.start()
        queue = Queue("default", connection=redis.Redis.from_url(redis_server.url))
        job = queue.enqueue("os.getpid")
        wait_for(lambda: job.get_status(refresh=True) == "finished", 60, "the worker to run a job")
    finally:
        desk.stop()


def test_a_work_loop_that_ends_while_redis_is_down_still_records_its_death_and_works_on(
    servers: tuple[PrivatePostgres, PrivateRedis],
) -> None:
    """RQ ends the work loop when Redis goes away under a job, and its teardown (recording the worker's
    death) then meets the closed port too: the worker must wait for Redis, record it, and loop again."""
    postgres, redis_server = servers
    env = {**os.environ, "DATABASE_URL": postgres.url, "REDIS_URL": redis_server.url, "PYTHONUNBUFFERED": "1"}
    manage(env, "migrate", "--noinput")
    desk = Desk(env)
    try:
        worker = desk.worker()
        queue = Queue("default", connection=redis.Redis.from_url(redis_server.url))
        job = queue.enqueue("time.sleep", 2)
        wait_for(lambda: job.get_status(refresh=True) == "started", 60, "the job to start")
        # The job ends while Redis is down: the loop breaks, and its teardown cannot reach Redis either.
        redis_server.stop()
        desk.wait_for_log(worker, REDIS_UNREACHABLE, timeout=30)  # the teardown waits for Redis
        assert worker.poll() is None, desk.log_tails()
        redis_server.start()
        second = Queue("default", connection=redis.Redis.from_url(redis_server.url)).enqueue("os.getpid")
        wait_for(lambda: second.get_status(refresh=True) == "finished", 60, "the worker to work on")
    finally:
        desk.stop()
