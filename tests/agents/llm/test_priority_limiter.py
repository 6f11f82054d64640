"""A person before a schedule, on the LLM's slots (issue 33, 3): scheduled work never takes the slots kept for
people, waits while a person's call waits, uses its share when nobody does; a waiter that died stops holding
it back. Each against the real Redis the tests start (RedisLimiter) and its in-process twin (ThreadLimiter).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from agents.llm.limiter import Limiter, RedisLimiter, ThreadLimiter, scheduled_share
from agents.llm.priority import is_scheduled, scheduled_work
from tests.private_services import PrivateRedis

WAIT_S = 5.0
KEY = "http://127.0.0.1:8081/v1"
MakeLimiter = Callable[..., Limiter]


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(params=["redis", "thread"])
def make_limiter(request: pytest.FixtureRequest, private_redis: str) -> Iterator[MakeLimiter]:
    clients: list[redis.Redis] = []

    def make(limit: int, kept_for_people: int) -> Limiter:
        if request.param == "thread":
            return ThreadLimiter(limit, kept_for_people=kept_for_people)
        client = redis.Redis.from_url(private_redis)
        clients.append(client)
        prefix = f"priority-{time.monotonic_ns()}"
        return RedisLimiter(client, limit, kept_for_people=kept_for_people, poll_s=0.005, prefix=prefix)

    yield make
    for client in clients:
        client.close()


class Caller:
    """A thread that takes a slot as a person or as scheduled work and holds it until ``leave``."""

    def __init__(
        self, limiter: Limiter, *, scheduled: bool, log: list[str] | None = None, name: str = ""
    ) -> None:
        self.entered, self._leave = threading.Event(), threading.Event()
        self.scheduled = scheduled

        def take() -> None:
            with scheduled_work(scheduled), limiter.slot(KEY):
                if log is not None:
                    log.append(name)
                self.entered.set()
                self._leave.wait(30)

        self.thread = threading.Thread(target=take, daemon=True)
        self.thread.start()

    def let_go(self) -> None:
        self._leave.set()

    def leave(self) -> None:
        self._leave.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "the slot was never given back"


def leave_all(callers: list[Caller]) -> None:
    """Each leaves as soon as it is in: one still waiting gets in when another leaves, then leaves too."""
    for caller in callers:
        caller.let_go()
    for caller in callers:
        caller.leave()


def entered(callers: list[Caller]) -> int:
    return sum(caller.entered.is_set() for caller in callers)


def test_scheduled_work_holds_at_most_its_share_and_a_persons_first_call_starts_at_once(
    make_limiter: MakeLimiter,
) -> None:
    limiter = make_limiter(3, 1)
    week = [Caller(limiter, scheduled=True) for _ in range(6)]
    deadline = time.monotonic() + WAIT_S
    while entered(week) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # time enough for any more of them to get in, if the cap let them
    assert entered(week) == 2  # its share (3 - 1) used, nobody waiting; never the slot kept for people
    person = Caller(limiter, scheduled=False)
    assert person.entered.wait(1.0), "a person's first call waited behind scheduled work"
    leave_all([person, *week])


def test_with_no_slot_kept_scheduled_work_uses_every_slot(make_limiter: MakeLimiter) -> None:
    limiter = make_limiter(3, 0)
    week = [Caller(limiter, scheduled=True) for _ in range(4)]
    deadline = time.monotonic() + WAIT_S
    while entered(week) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert entered(week) == 3
    leave_all(week)


def test_a_waiting_persons_call_is_served_before_waiting_scheduled_work(make_limiter: MakeLimiter) -> None:
    # No slot kept: only the waiting order is under test. Three rounds: by chance alone the person would come
    # first among five waiters once in 125 times.
    limiter = make_limiter(2, 0)
    for _ in range(3):
        order: list[str] = []
        holders = [Caller(limiter, scheduled=False) for _ in range(2)]
        assert all(holder.entered.wait(WAIT_S) for holder in holders)
        week = [Caller(limiter, scheduled=True, log=order, name="scheduled") for _ in range(4)]
        time.sleep(0.1)  # the scheduled callers wait first
        person = Caller(limiter, scheduled=False, log=order, name="person")
        time.sleep(0.1)
        assert order == []  # every slot is held
        holders[0].leave()
        assert person.entered.wait(WAIT_S)
        time.sleep(0.1)
        assert order == ["person"]  # the freed slot went to the person, not to any scheduled caller
        holders[1].leave()
        deadline = time.monotonic() + WAIT_S
        while len(order) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert order[:2] == ["person", "scheduled"]  # with nobody waiting, scheduled work goes on
        leave_all([person, *week])


def test_a_waiter_that_died_stops_holding_scheduled_work_back(private_redis: str) -> None:
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 2, kept_for_people=0, poll_s=0.005, waiter_s=0.3, prefix="dead-waiter")
    assert limiter.try_acquire(KEY, "call-1") and limiter.try_acquire(KEY, "call-2")
    # A person's call finds no room, is counted as waiting, and its process dies: it never polls again.
    assert not limiter.try_acquire(KEY, "died-waiting")
    limiter.release(KEY, "call-1")
    assert not limiter.try_acquire(KEY, "weekly-screen", scheduled=True)  # a person is waiting
    time.sleep(0.4)  # past the waiter's expiry
    assert limiter.try_acquire(KEY, "weekly-screen", scheduled=True)
    for holder in ("call-2", "weekly-screen"):
        limiter.release(KEY, holder)
    client.close()


def test_a_scheduled_holders_lease_is_renewed_and_it_counts_against_the_share(private_redis: str) -> None:
    """A scheduled call longer than its lease keeps its place in the scheduled share (the renewal covers
    both sets), so a second scheduled call still waits on a two-slot endpoint with one slot kept."""
    client = redis.Redis.from_url(private_redis)
    limiter = RedisLimiter(client, 2, kept_for_people=1, lease_s=0.3, poll_s=0.005, prefix="renewed")
    other = RedisLimiter(client, 2, kept_for_people=1, lease_s=0.3, poll_s=0.005, prefix="renewed")
    with scheduled_work(), limiter.slot(KEY):
        time.sleep(1.0)  # three leases long
        assert not other.try_acquire(KEY, "second-scheduled", scheduled=True)
        assert other.try_acquire(KEY, "a-person")
        other.release(KEY, "a-person")
    assert other.try_acquire(KEY, "second-scheduled", scheduled=True)
    other.release(KEY, "second-scheduled")
    client.close()


def test_scheduled_work_keeps_one_slot_whatever_is_kept_for_people() -> None:
    assert scheduled_share(3, 1) == 2
    assert scheduled_share(1, 1) == 1  # a one-slot endpoint still runs the week, after every person's call
    assert scheduled_share(3, 5) == 1
    assert scheduled_share(3, 0) == 3
    with pytest.raises(ValueError, match="negative"):
        scheduled_share(3, -1)


def test_the_mark_is_a_persons_by_default_and_nests() -> None:
    assert not is_scheduled()
    with scheduled_work():
        assert is_scheduled()
        with scheduled_work(False):
            assert not is_scheduled()
        assert is_scheduled()
    assert not is_scheduled()
