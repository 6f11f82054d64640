"""Concurrency caps: threads in one process, and processes sharing a real Redis."""

from __future__ import annotations

import multiprocessing
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
from tests.private_services import PrivateRedis, free_port


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


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


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


def take_slot(limiter: RedisLimiter, when: list[float]) -> None:
    with limiter.slot("endpoint"):
        when.append(time.monotonic())


def test_a_call_longer_than_the_lease_keeps_its_slot_until_it_ends(private_redis: str) -> None:
    # The local model's calls take minutes; a lease of 0.3 s stands for one far shorter than the call.
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 1, lease_s=0.3, poll_s=0.01, prefix="long-call")
    other = RedisLimiter(redis.Redis.from_url(private_redis), 1, lease_s=0.3, poll_s=0.01, prefix="long-call")
    got_in_at: list[float] = []
    with limiter.slot("endpoint"):
        started = time.monotonic()
        waiter = threading.Thread(target=take_slot, args=(other, got_in_at))
        waiter.start()
        time.sleep(1.5)  # five leases long
        assert not got_in_at, "a second caller got a slot while the first call was still running"
        ended = time.monotonic()
    waiter.join(timeout=5)
    assert got_in_at and got_in_at[0] >= ended and ended - started >= 1.5
    client.close()


def test_a_restarted_redis_is_waited_for_and_the_slot_then_taken(tmp_path: Path) -> None:
    server = PrivateRedis(tmp_path)
    server.start()
    limiter = RedisLimiter(redis.Redis.from_url(server.url), 1, poll_s=0.01, outage_s=30, prefix="restart")
    server.stop()
    taken: list[float] = []
    waiter = threading.Thread(target=take_slot, args=(limiter, taken))
    waiter.start()
    time.sleep(0.5)
    assert not taken  # Redis is down: the call waits instead of failing
    server.start()
    waiter.join(timeout=10)
    assert taken
    server.stop()


def test_an_unreachable_redis_becomes_a_transient_error_after_the_outage_allowance() -> None:
    # No client-side retries: the limiter owns the waiting, and the test stays fast.
    client = redis.Redis(host="127.0.0.1", port=free_port(), retry=Retry(NoBackoff(), 0))
    limiter = RedisLimiter(client, 1, outage_s=0.3)
    started = time.monotonic()
    with pytest.raises(TransientError, match="Redis concurrency limiter") as raised, limiter.slot("endpoint"):
        pass
    assert raised.value.kind == "limiter" and 0.3 <= time.monotonic() - started < 5
    client.close()
