"""Concurrency caps: threads in one process, and processes sharing a real Redis."""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Iterator
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import cast

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from agents.llm.errors import TransientError
from agents.llm.limiter import Limiter, RedisLimiter, ThreadLimiter
from tests.private_services import PrivateRedis, free_port

WAIT_S = 5.0
CRASH_LEASE_S = 0.5


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


class CallFailed(Exception):
    """What a call inside a slot raised (a timeout, a refused answer): the slot must be given back."""


class Entering:
    """A thread that takes a slot of ``key`` and gives it back: ``wait`` until it got in, ``join`` until it
    has given it back (before its limiter's Redis client is closed under it)."""

    def __init__(self, limiter: Limiter, key: str) -> None:
        self.entered = threading.Event()

        def take() -> None:
            with limiter.slot(key):
                self.entered.set()

        self.thread = threading.Thread(target=take, daemon=True)
        self.thread.start()

    def wait(self, timeout: float) -> bool:
        return self.entered.wait(timeout)

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the slot was never given back"


def enters(limiter: Limiter, key: str) -> Entering:
    return Entering(limiter, key)


def test_each_endpoint_has_its_own_cap() -> None:
    limiter = ThreadLimiter(1)
    with limiter.slot("a"):
        second_on_a = enters(limiter, "a")
        assert enters(limiter, "b").wait(WAIT_S), "holding 'a' blocked 'b'"
        # Started before the one on "b", which got in and out meanwhile: "a" is full, so it still waits.
        assert not second_on_a.entered.is_set()
    assert second_on_a.wait(WAIT_S), "'a' was not given back"


def test_a_thread_slot_is_given_back_when_the_call_raises() -> None:
    limiter = ThreadLimiter(1)
    with pytest.raises(CallFailed), limiter.slot("endpoint"):
        raise CallFailed
    assert enters(limiter, "endpoint").wait(WAIT_S), "the only slot stayed taken after the error"


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


def holders(client: redis.Redis, key: str) -> dict[str, float]:
    """Who holds a slot of ``key`` (``prefix:endpoint``), with each one's lease expiry (Redis ms)."""
    entries = cast(list[tuple[bytes, float]], client.zrange(key, 0, -1, withscores=True))
    return {member.decode(): score for member, score in entries}


def test_a_call_longer_than_the_lease_keeps_its_slot_until_it_ends(private_redis: str) -> None:
    # The local model's calls take minutes; a lease of 0.3 s stands for one far shorter than the call.
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 1, lease_s=0.3, poll_s=0.01, prefix="long-call")
    other = RedisLimiter(redis.Redis.from_url(private_redis), 1, lease_s=0.3, poll_s=0.01, prefix="long-call")
    got_in_at: list[float] = []
    with limiter.slot("endpoint"):
        ((holder, first_expiry),) = holders(client, "long-call:endpoint").items()
        waiter = threading.Thread(target=take_slot, args=(other, got_in_at))
        waiter.start()
        # The call goes on until its lease has been renewed five leases past its first expiry; all along,
        # the second caller must stay out.
        deadline = time.monotonic() + 10
        while holders(client, "long-call:endpoint").get(holder, 0) < first_expiry + 5 * 300:
            assert not got_in_at, "a second caller got a slot while the first call was still running"
            assert time.monotonic() < deadline, "the running call's lease was not renewed"
            time.sleep(0.01)  # polling Redis
        assert not got_in_at, "a second caller got a slot while the first call was still running"
        ended = time.monotonic()
    waiter.join(timeout=5)
    assert got_in_at and got_in_at[0] >= ended
    client.close()


def test_a_redis_slot_is_given_back_when_the_call_raises(private_redis: str) -> None:
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 1, lease_s=30, poll_s=0.01, prefix="error-test")
    with pytest.raises(CallFailed), limiter.slot("endpoint"):
        assert len(holders(client, "error-test:endpoint")) == 1
        raise CallFailed
    assert holders(client, "error-test:endpoint") == {}
    # At once, not after the 30 s lease.
    assert RedisLimiter(client, 1, prefix="error-test").try_acquire("endpoint", "next-call")
    client.close()


def hold_until_killed(url: str, prefix: str, inside: EventType) -> None:
    """In a separate process: take the only slot and hold it (its lease renewed) until killed."""
    limiter = RedisLimiter(redis.Redis.from_url(url), 1, lease_s=CRASH_LEASE_S, poll_s=0.01, prefix=prefix)
    with limiter.slot("endpoint"):
        inside.set()
        threading.Event().wait()


def test_a_killed_holders_slot_comes_free_when_its_lease_runs_out(private_redis: str) -> None:
    context = multiprocessing.get_context("spawn")
    inside = context.Event()
    holder = context.Process(target=hold_until_killed, args=(private_redis, "crash-test", inside))
    holder.start()
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 1, lease_s=CRASH_LEASE_S, poll_s=0.01, prefix="crash-test")
    try:
        assert inside.wait(20), "the holder process never got its slot"
        ((_, first_expiry),) = holders(client, "crash-test:endpoint").items()
        # Alive, it keeps the slot past its first lease (renewed from its own thread)...
        deadline = time.monotonic() + 10
        while max(holders(client, "crash-test:endpoint").values()) < first_expiry + 3 * CRASH_LEASE_S * 1000:
            assert not limiter.try_acquire("endpoint", "newcomer"), "a newcomer joined a live holder"
            assert time.monotonic() < deadline, "the live holder's lease was not renewed"
            time.sleep(0.01)  # polling Redis
        holder.kill()  # ... killed mid-call (SIGKILL: no release, no more renewals)
        holder.join(timeout=10)
        killed = time.monotonic()
        # Free within one lease of the kill (the renewal just before it counts), not held for ever.
        newcomer = enters(limiter, "endpoint")
        assert newcomer.wait(CRASH_LEASE_S + WAIT_S), "the killed holder kept its slot"
        waited = time.monotonic() - killed
        newcomer.join(WAIT_S)  # given back before the client closes under it
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join(timeout=10)
        client.close()
    assert holder.exitcode == -signal.SIGKILL
    assert waited < CRASH_LEASE_S + 1.0, waited


def test_a_restarted_redis_is_waited_for_and_the_slot_then_taken(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = PrivateRedis(tmp_path)
    server.start()
    limiter = RedisLimiter(redis.Redis.from_url(server.url), 1, poll_s=0.01, outage_s=30, prefix="restart")
    server.stop()
    taken: list[float] = []
    waiter = threading.Thread(target=take_slot, args=(limiter, taken))
    waiter.start()
    # The call met the closed port twice and waits on: it does not fail.
    deadline = time.monotonic() + WAIT_S
    while sum("cannot reach Redis" in record.getMessage() for record in caplog.records) < 2:
        assert waiter.is_alive(), "the call ended while Redis was down"
        assert time.monotonic() < deadline, "the limiter never said it was waiting for Redis"
        time.sleep(0.01)  # polling the captured log
    assert not taken and waiter.is_alive()
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
