"""Concurrency caps: threads in one process, and processes sharing a real Redis."""

from __future__ import annotations

import multiprocessing
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from agents.llm.errors import TransientError
from agents.llm.limiter import RedisLimiter, ThreadLimiter

REDIS_SERVER = shutil.which("redis-server")


def test_a_thread_limiter_never_lets_more_than_limit_threads_in() -> None:
    limiter = ThreadLimiter(3)
    inside, most = 0, 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        with limiter.slot("http://127.0.0.1:8081/v1"):
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.01)
            with lock:
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 3


def test_each_endpoint_has_its_own_cap() -> None:
    limiter = ThreadLimiter(1)
    with limiter.slot("a"), limiter.slot("b"):
        pass  # holding "a" does not block "b"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip(
            "redis-server is not installed (apt-get install redis-server); the Redis limiter needs one"
        )
    state: Path = tmp_path_factory.mktemp("redis")
    port = free_port()
    command = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [*command, "--daemonize", "no", "--dir", str(state)], stdout=subprocess.DEVNULL
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 5
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.02)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=5)


def hold_slots(url: str, prefix: str, rounds: int, start: Barrier, results: Queue[int]) -> None:
    """In a separate process: take a slot ``rounds`` times; report the most holders seen at once."""
    client = redis.Redis.from_url(url)
    limiter = RedisLimiter(client, 2, lease_s=30, poll_s=0.005, prefix=prefix)
    most = 0
    start.wait(timeout=10)  # all processes compete from the same moment, however long each took to start
    for _ in range(rounds):
        with limiter.slot("endpoint"):
            most = max(most, int(client.incr(f"{prefix}:inside")))
            time.sleep(0.01)
            client.decr(f"{prefix}:inside")
    client.close()
    results.put(most)


def test_processes_sharing_redis_never_exceed_the_limit(private_redis: str) -> None:
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(4), context.Queue()
    workers = [
        context.Process(target=hold_slots, args=(private_redis, "cap-test", 8, start, results))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    most = [results.get(timeout=20) for _ in workers]
    for worker in workers:
        worker.join(timeout=5)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    assert max(most) == 2  # the cap was reached, never passed


def test_a_holder_that_died_is_purged_when_its_lease_expires(private_redis: str) -> None:
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 1, lease_s=0.2, poll_s=0.01, prefix="lease-test")
    assert limiter.try_acquire("endpoint", "killed-worker")  # never released, like a worker killed mid-call
    assert not limiter.try_acquire("endpoint", "next-worker")
    started = time.monotonic()
    with limiter.slot("endpoint"):
        waited = time.monotonic() - started
    assert 0.1 <= waited < 2
    assert client.zcard("lease-test:endpoint") == 0
    client.close()


def test_an_unreachable_redis_is_a_transient_error() -> None:
    # No client-side retries: the gateway owns retrying, and the test stays fast.
    client = redis.Redis(host="127.0.0.1", port=free_port(), retry=Retry(NoBackoff(), 0))
    limiter = RedisLimiter(client, 1)
    with pytest.raises(TransientError, match="Redis concurrency limiter") as raised, limiter.slot("endpoint"):
        pass
    assert raised.value.kind == "limiter"
    client.close()
