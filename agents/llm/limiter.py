"""Concurrency caps per endpoint: in one process (``ThreadLimiter``) or across processes and machines (Redis).

A slot is held for one HTTP attempt, never across the backoff sleep, so a waiting retry frees its slot.
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
from typing import Protocol

import redis

from agents.llm.errors import TransientError

logger = logging.getLogger(__name__)


class Limiter(Protocol):
    def slot(self, key: str) -> AbstractContextManager[None]: ...


class ThreadLimiter:
    """At most ``limit`` holders per key among the threads of this process."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._semaphores: dict[str, threading.BoundedSemaphore] = {}

    @contextmanager
    def slot(self, key: str) -> Iterator[None]:
        with self._lock:
            semaphore = self._semaphores.setdefault(key, threading.BoundedSemaphore(self.limit))
        with semaphore:
            yield


# Atomic "purge expired holders, then join if there is room". The clock is Redis's own, so holders on
# machines with skewed clocks agree on who has expired.
_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  local lease_ms = tonumber(ARGV[3])
  redis.call('ZADD', KEYS[1], now_ms + lease_ms, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
  return 1
end
return 0
"""
# Extend a live holder's lease (re-adding it if Redis restarted and forgot it).
_RENEW = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local lease_ms = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now_ms + lease_ms, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
return 1
"""


class RedisLimiter:
    """A counting semaphore shared by every process that uses the same Redis and key prefix.

    Holders live in a sorted set scored by lease expiry. A live holder's lease is renewed every third of
    ``lease_s`` by a background thread, so the cap holds for a call of any length (a 10-minute call on the
    local model included), while a holder that died without releasing (a killed worker) is purged within
    ``lease_s``. If Redis restarts and forgets the set, the next renewal puts every live holder back; until
    then (a third of a lease at most) a newcomer may join them.

    A Redis that cannot be reached is waited for (with backoff) for up to ``outage_s``: a restart must not
    fail the calls that were waiting for a slot. After that, a ``TransientError`` for the gateway to retry.
    """

    def __init__(
        self,
        client: redis.Redis,
        limit: int,
        *,
        lease_s: float = 30.0,
        poll_s: float = 0.05,
        outage_s: float = 120.0,
        prefix: str = "analyst-desk:llm-slots",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.lease_ms = max(1, round(lease_s * 1000))
        self.poll_s = poll_s
        self.outage_s = outage_s
        self.prefix = prefix
        self._client = client
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._sleep = sleep
        self._held: dict[str, str] = {}  # holder -> key, renewed while held
        self._held_lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._renewer_pid = 0

    def _key(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    def try_acquire(self, key: str, holder: str) -> bool:
        try:
            return bool(self._acquire(keys=[self._key(key)], args=[self.limit, holder, self.lease_ms]))
        except redis.RedisError as exc:
            raise TransientError(f"the Redis concurrency limiter failed: {exc}", kind="limiter") from exc

    def release(self, key: str, holder: str) -> None:
        try:
            self._client.zrem(self._key(key), holder)
        except redis.RedisError as exc:
            # The call itself is done and must not fail now; the lease expires on its own, so a lost
            # release only delays the next holder.
            logger.warning("could not release LLM slot %s for %s: %s", holder, key, exc)

    @contextmanager
    def slot(self, key: str) -> Iterator[None]:
        holder = uuid.uuid4().hex
        self._wait_for_slot(key, holder)
        with self._held_lock:
            self._held[holder] = key
        self._ensure_renewer()
        try:
            yield
        finally:
            with self._held_lock:
                self._held.pop(holder, None)
            self.release(key, holder)

    def _wait_for_slot(self, key: str, holder: str) -> None:
        outage_since: float | None = None
        failures = 0
        while True:
            try:
                if self.try_acquire(key, holder):
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
            for holder, key in held:
                try:
                    self._renew(keys=[self._key(key)], args=[holder, self.lease_ms])
                except redis.RedisError as exc:
                    logger.warning("could not renew LLM slot %s for %s: %s", holder, key, exc)
