"""The production worker (DeskWorker) stops when asked, as scripts/run.sh asks it: SIGTERM.

Idle, it exits at once; busy, it finishes its job first (RQ's warm shutdown). DeskWorker starts its work
loop again when the loop ends on an error, and an idle worker's stop request ends the loop the same way, so
it once took every SIGTERM for an error and had to be killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import redis
from rq import Queue

from tests.memos.crash_harness import WORKER, Desk
from tests.testenv import redis_url_for

STOP_TIMEOUT_S = 10.0
STARTED_AGAIN = "its work loop ended on an error; starting it again"
# A Redis database of these tests' own (one per parallel worker): no other test's job reaches their worker,
# nor theirs another's.
OWN_REDIS_SLOT = 1


@pytest.fixture
def own_redis(redis_url: str) -> str:
    url = redis_url_for(redis_url, OWN_REDIS_SLOT)
    redis.Redis.from_url(url).flushdb()
    return url


def listening_worker(desk: Desk) -> subprocess.Popen[bytes]:
    worker = desk.start("rqworker", "default", "--worker-class", WORKER)
    desk.wait_for_log(worker, "Listening on default", timeout=60)
    return worker


def stopped(desk: Desk, worker: subprocess.Popen[bytes]) -> int:
    try:
        return worker.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"the worker was still running {STOP_TIMEOUT_S:.0f} s after SIGTERM\n{desk.log_tails()}"
        ) from None


def test_an_idle_worker_exits_cleanly_on_sigterm(own_redis: str) -> None:
    desk = Desk({**os.environ, "REDIS_URL": own_redis, "PYTHONUNBUFFERED": "1"})
    try:
        worker = listening_worker(desk)
        worker.send_signal(signal.SIGTERM)
        assert stopped(desk, worker) == 0, desk.log_tails()
        assert STARTED_AGAIN not in desk.log_of(worker)
    finally:
        desk.stop()


def test_a_busy_worker_finishes_its_job_then_exits_on_sigterm(own_redis: str) -> None:
    desk = Desk({**os.environ, "REDIS_URL": own_redis, "PYTHONUNBUFFERED": "1"})
    connection = redis.Redis.from_url(own_redis)
    try:
        worker = listening_worker(desk)
        job = Queue("default", connection=connection).enqueue("time.sleep", 2)  # a job that takes 2 s
        desk.wait_for_log(worker, "default: time.sleep(2)", timeout=30)
        # Busy means its work-horse has the job: RQ logs the job's line before it marks it started, and on a
        # loaded machine a SIGTERM in between found the job still queued (seen once in CI).
        deadline = time.monotonic() + 30
        while job.get_status(refresh=True) != "started" and time.monotonic() < deadline:
            time.sleep(0.05)
        worker.send_signal(signal.SIGTERM)
        assert stopped(desk, worker) == 0, desk.log_tails()
        assert job.get_status(refresh=True) == "finished"
        assert STARTED_AGAIN not in desk.log_of(worker)
    finally:
        connection.close()
        desk.stop()
