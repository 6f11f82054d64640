"""Concurrency caps per endpoint: in one process (``ThreadLimiter``) or across processes and machines (Redis).

A slot is held for one HTTP attempt, never across the backoff sleep, so a waiting retry frees its slot.
"""

from __future__ import annotations

import logging
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


class RedisLimiter:
    """A counting semaphore shared by every process that uses the same Redis and key prefix.

    Holders live in a sorted set scored by lease expiry; a holder that dies without releasing (a killed
    worker) is purged once its lease runs out, so ``lease_s`` must exceed the longest single attempt
    (the provider timeout). Redis errors surface as ``TransientError`` so the gateway retries them.
    """

    def __init__(
        self,
        client: redis.Redis,
        limit: int,
        *,
        lease_s: float = 300.0,
        poll_s: float = 0.05,
        prefix: str = "analyst-desk:llm-slots",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.lease_ms = max(1, round(lease_s * 1000))
        self.poll_s = poll_s
        self.prefix = prefix
        self._client = client
        self._acquire = client.register_script(_ACQUIRE)
        self._sleep = sleep

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
        while not self.try_acquire(key, holder):
            # Jitter keeps waiting processes from polling in lock-step.
            self._sleep(self.poll_s * (0.5 + random.random()))  # noqa: S311 - not for security
        try:
            yield
        finally:
            self.release(key, holder)
