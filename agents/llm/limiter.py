"""Concurrency caps per endpoint: in one process (``ThreadLimiter``) or across processes and machines (Redis).

A slot is held for one HTTP attempt, never across the backoff sleep, so a waiting retry frees its slot.

A person before a schedule (issue 33): a call made inside ``agents.llm.priority.scheduled_work()`` (a run the
desk started on its own: the weekly screen, a refinement cycle, a weekly memo, the week) takes a slot only
while no person's call waits for one on the same endpoint, and holds at most ``limit - kept_for_people`` of
them (never fewer than one), so a person's first call starts at once even while a 40-minute screen holds the
model, and waits behind at most the scheduled calls already in flight, never behind the screen's queue.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

import redis

from agents.llm.errors import TransientError
from agents.llm.priority import is_scheduled

logger = logging.getLogger(__name__)


class Limiter(Protocol):
    def slot(self, key: str) -> AbstractContextManager[None]: ...


def scheduled_share(limit: int, kept_for_people: int) -> int:
    """The slots scheduled work may hold at once: ``limit`` less those kept for people, never under one (a
    one-slot endpoint still runs the week, only after every person's call)."""
    if kept_for_people < 0:
        raise ValueError(f"the slots kept for people cannot be negative, got {kept_for_people}")
    return max(1, limit - kept_for_people)


@dataclass
class _Gate:
    """One key's holders in one process: all of them, the scheduled ones, and the people waiting."""

    changed: threading.Condition
    held: int = 0
    held_scheduled: int = 0
    people_waiting: int = 0


class ThreadLimiter:
    """At most ``limit`` holders per key among the threads of this process; scheduled work as in Redis."""

    def __init__(self, limit: int, *, kept_for_people: int = 1) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.scheduled_limit = scheduled_share(limit, kept_for_people)
        self._lock = threading.Lock()
        self._gates: dict[str, _Gate] = {}

    @contextmanager
    def slot(self, key: str) -> Iterator[None]:
        scheduled = is_scheduled()
        with self._lock:
            gate = self._gates.setdefault(key, _Gate(threading.Condition()))
        with gate.changed:
            if scheduled:
                gate.changed.wait_for(
                    lambda: (
                        gate.people_waiting == 0
                        and gate.held_scheduled < self.scheduled_limit
                        and gate.held < self.limit
                    )
                )
                gate.held_scheduled += 1
            else:
                gate.people_waiting += 1
                try:
                    gate.changed.wait_for(lambda: gate.held < self.limit)
                finally:
                    gate.people_waiting -= 1
                    gate.changed.notify_all()  # scheduled work waiting on this person may go now
            gate.held += 1
        try:
            yield
        finally:
            with gate.changed:
                gate.held -= 1
                gate.held_scheduled -= 1 if scheduled else 0
                gate.changed.notify_all()


# Atomic "purge expired holders, then join if there is room". The clock is Redis's own, so holders on
# machines with skewed clocks agree on who has expired. KEYS: every holder, the scheduled holders, the people
# waiting (each scored by when it expires). A person who finds no room is put among those waiting, with a
# score a few polls ahead that each poll renews: a waiter that died stops renewing and drops out on its own.
_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  local lease_ms = tonumber(ARGV[3])
  redis.call('ZADD', KEYS[1], now_ms + lease_ms, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
  redis.call('ZREM', KEYS[3], ARGV[2])
  return 1
end
local wait_ms = tonumber(ARGV[4])
redis.call('ZADD', KEYS[3], now_ms + wait_ms, ARGV[2])
redis.call('PEXPIRE', KEYS[3], wait_ms * 2)
return 0
"""
# The same for scheduled work: no room while a person waits, nor beyond its share (ARGV[4]).
_ACQUIRE_SCHEDULED = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now_ms)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now_ms)
if redis.call('ZCARD', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 0
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  local lease_ms = tonumber(ARGV[3])
  for i = 1, 2 do
    redis.call('ZADD', KEYS[i], now_ms + lease_ms, ARGV[2])
    redis.call('PEXPIRE', KEYS[i], lease_ms * 2)
  end
  return 1
end
return 0
"""
# Extend a live holder's lease in each of its sets (re-adding it if Redis restarted and forgot it).
_RENEW = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local lease_ms = tonumber(ARGV[2])
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now_ms + lease_ms, ARGV[1])
  redis.call('PEXPIRE', key, lease_ms * 2)
end
return 1
"""


class RedisLimiter:
    """A counting semaphore shared by every process that uses the same Redis and key prefix.

    Holders live in a sorted set scored by lease expiry. A live holder's lease is renewed every third of
    ``lease_s`` by a background thread, so the cap holds for a call of any length (a 10-minute call on the
    local model included), while a holder that died without releasing (a killed worker) is purged within
    ``lease_s``. If Redis restarts and forgets the set, the next renewal puts every live holder back; until
    then (a third of a lease at most) a newcomer may join them.

    Scheduled work (agents.llm.priority) also lives in a set of its own, capped at ``limit -
    kept_for_people`` (at least one), and joins only while the set of people waiting, each entry expiring
    ``waiter_s`` after its last poll, is empty.

    A Redis that cannot be reached is waited for (with backoff) for up to ``outage_s``: a restart must not
    fail the calls that were waiting for a slot. After that, a ``TransientError`` for the gateway to retry.
    """

    def __init__(
        self,
        client: redis.Redis,
        limit: int,
        *,
        kept_for_people: int = 1,
        lease_s: float = 30.0,
        poll_s: float = 0.05,
        waiter_s: float = 2.0,
        outage_s: float = 120.0,
        prefix: str = "analyst-desk:llm-slots",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.scheduled_limit = scheduled_share(limit, kept_for_people)
        self.lease_ms = max(1, round(lease_s * 1000))
        self.poll_s = poll_s
        # Several polls long (a poll sleeps up to 1.5 poll_s): a live waiter never drops out between two.
        self.waiter_ms = max(1, round(max(waiter_s, poll_s * 6) * 1000))
        self.outage_s = outage_s
        self.prefix = prefix
        self._client = client
        self._acquire = client.register_script(_ACQUIRE)
        self._acquire_scheduled = client.register_script(_ACQUIRE_SCHEDULED)
        self._renew = client.register_script(_RENEW)
        self._sleep = sleep
        self._held: dict[str, tuple[str, bool]] = {}  # holder -> (key, scheduled), renewed while held
        self._held_lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._renewer_pid = 0

    def _key(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    def _keys(self, key: str) -> list[str]:
        """Every holder, the scheduled holders, the people waiting."""
        base = self._key(key)
        return [base, f"{base}:scheduled", f"{base}:people-waiting"]

    def try_acquire(self, key: str, holder: str, *, scheduled: bool = False) -> bool:
        """Join the key's holders if there is room for this caller; a person not let in is counted as
        waiting (until ``waiter_s`` after this attempt)."""
        script, last = (
            (self._acquire_scheduled, self.scheduled_limit) if scheduled else (self._acquire, self.waiter_ms)
        )
        try:
            return bool(script(keys=self._keys(key), args=[self.limit, holder, self.lease_ms, last]))
        except redis.RedisError as exc:
            raise TransientError(f"the Redis concurrency limiter failed: {exc}", kind="limiter") from exc

    def release(self, key: str, holder: str) -> None:
        holders, scheduled, waiting = self._keys(key)
        try:
            pipe = self._client.pipeline(transaction=False)
            for name in (holders, scheduled, waiting):
                pipe.zrem(name, holder)
            pipe.execute()
        except redis.RedisError as exc:
            # The call itself is done and must not fail now; the lease expires on its own, so a lost
            # release only delays the next holder.
            logger.warning("could not release LLM slot %s for %s: %s", holder, key, exc)

    @contextmanager
    def slot(self, key: str) -> Iterator[None]:
        holder, scheduled = uuid.uuid4().hex, is_scheduled()
        try:
            self._wait_for_slot(key, holder, scheduled)
        except BaseException:
            self.release(key, holder)  # a person who stopped waiting no longer holds scheduled work back
            raise
        with self._held_lock:
            self._held[holder] = (key, scheduled)
        self._ensure_renewer()
        try:
            yield
        finally:
            with self._held_lock:
                self._held.pop(holder, None)
            self.release(key, holder)

    def _wait_for_slot(self, key: str, holder: str, scheduled: bool) -> None:
        outage_since: float | None = None
        failures = 0
        while True:
            try:
                if self.try_acquire(key, holder, scheduled=scheduled):
                    return
            except TransientError:
                outage_since = outage_since if outage_since is not None else time.monotonic()
                if time.monotonic() - outage_since >= self.outage_s:
                    raise
                logger.warning("the LLM limiter cannot reach Redis; waiting for it to come back")
                failures += 1
                self._sleep(min(2.0, self.poll_s * 2**failures))
                continue
            outage_since, failures = None, 0
            # Jitter keeps waiting processes from polling in lock-step.
            self._sleep(self.poll_s * (0.5 + random.random()))  # noqa: S311 - not for security

    def _ensure_renewer(self) -> None:
        with self._held_lock:
            # A forked child (an RQ work-horse) inherits the object but not the thread: start its own.
            if self._renewer is not None and self._renewer.is_alive() and self._renewer_pid == os.getpid():
                return
            self._renewer_pid = os.getpid()
            self._renewer = threading.Thread(target=self._renew_forever, name="llm-slot-leases", daemon=True)
            self._renewer.start()

    def _renew_forever(self) -> None:
        interval = self.lease_ms / 3000
        while True:
            time.sleep(interval)
            with self._held_lock:
                held = list(self._held.items())
            for holder, (key, scheduled) in held:
                keys = self._keys(key)[: 2 if scheduled else 1]
                try:
                    self._renew(keys=keys, args=[holder, self.lease_ms])
                except redis.RedisError as exc:
                    logger.warning("could not renew LLM slot %s for %s: %s", holder, key, exc)
