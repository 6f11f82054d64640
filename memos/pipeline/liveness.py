"""Who is working on a run, and whether they are still alive.

Two locks, for two jobs. ``RunLock`` (a Redis key with a TTL) keeps a second worker from even starting a
stage another worker is running; it is cheap and expires by itself when its holder dies. It cannot be the
last word, because Redis may restart and forget it, and a paused process may wake up after its TTL: the
last word is the run's ``lease`` in PostgreSQL (memos.pipeline.claims), a fencing token checked by every
write. ``Heartbeat`` keeps both alive from a background thread and notices when either is lost.

Refresh and release are single Lua scripts (compare-and-expire, compare-and-delete): checking the owner
and acting in two commands would let a lock that expired in between be extended or deleted for its new
owner.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self

import redis
from django.conf import settings
from django.db import DatabaseError, connection

from memos.redis_client import redis_client

log = logging.getLogger(__name__)

LOCK_PREFIX = "analyst-desk:run-lock:"

# 1 still ours (expiry extended); 2 it had vanished (Redis restarted) and is ours again; 0 someone else's.
_REFRESH = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def lock_ttl_ms() -> int:
    return max(2, int(settings.RUN_STALE_AFTER_S)) * 1000


class RunLock:
    """A Redis lock on one run, owned by a random token; every operation on it is one atomic script."""

    def __init__(self, run_id: str, token: str, *, client: redis.Redis | None = None) -> None:
        self.key = LOCK_PREFIX + run_id
        self.token = token
        self._client = client or redis_client()
        self._refresh = self._client.register_script(_REFRESH)
        self._release = self._client.register_script(_RELEASE)

    def acquire(self) -> bool:
        return bool(self._client.set(self.key, self.token, nx=True, px=lock_ttl_ms()))

    def refresh(self) -> bool:
        """Extend the lock, or take it back if Redis forgot it; False when another worker holds it."""
        return bool(self._refresh(keys=[self.key], args=[self.token, lock_ttl_ms()]))

    def release(self) -> None:
        try:
            self._release(keys=[self.key], args=[self.token])
        except redis.RedisError as exc:
            # It expires by itself; a lost release only delays the next claim by one TTL.
            log.warning("could not release %s: %s", self.key, exc)


class Heartbeat:
    """What keeps one held stage alive: its run's heartbeat stamped and its lock refreshed, on each beat of
    the worker's ``Beater`` while the stage runs.

    A database or Redis error is logged and the next beat tries again: an outage shorter than
    ``RUN_STALE_AFTER_S`` must not hand a live stage to another worker. When a beat proves the stage is no
    longer this worker's (the lease moved on, the run ended, or another worker holds the lock), ``lost`` is
    set and every later write of the stage is refused.
    """

    def __init__(
        self,
        run_id: str,
        lease: int,
        lock: RunLock,
        lost: threading.Event,
        stamp: Callable[[str, int], bool],
    ) -> None:
        self.run_id = run_id
        self.lease = lease
        self.lock = lock
        self.lost = lost
        self._stamp = stamp  # stamps the heartbeat if the lease is still ours; False when it is not

    def beat_once(self) -> None:
        try:
            if not self._stamp(self.run_id, self.lease):
                self._lose("the run's lease moved on or the run ended")
        except DatabaseError as exc:
            log.warning("run %s: heartbeat could not reach the database: %s", self.run_id, exc)
            connection.close()
        try:
            if not self.lock.refresh():
                self._lose("another worker holds the run's lock")
        except redis.RedisError as exc:
            log.warning("run %s: heartbeat could not reach Redis: %s", self.run_id, exc)

    def _lose(self, why: str) -> None:
        if not self.lost.is_set():
            log.warning(
                "run %s: lease %s lost (%s); the stage stops before its next write",
                self.run_id,
                self.lease,
                why,
            )
        self.lost.set()


class Beater:
    """One thread that beats, every ``RUN_HEARTBEAT_S``, the stage a worker is running, for as long as the
    worker goes on from stage to stage: a thread started and joined for each stage cost a millisecond or
    two of each hand-over, on the run's path."""

    def __init__(self) -> None:
        self._beating: Heartbeat | None = None
        self._lock = threading.Lock()  # held through a beat: a stage ends only between beats
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @contextmanager
    def beating(self, heartbeat: Heartbeat) -> Iterator[None]:
        """Beat for ``heartbeat``'s stage while the block runs; once it has ended, no beat for it is under
        way or to come (a last beat must not hide an ended stage from the watchdog)."""
        with self._lock:
            self._beating = heartbeat
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="stage-heartbeat", daemon=True)
            self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                self._beating = None

    def _beat(self) -> None:
        try:
            while not self._stop.wait(float(settings.RUN_HEARTBEAT_S)):
                with self._lock:
                    if self._beating is not None:
                        self._beating.beat_once()
        finally:
            connection.close()  # this thread's own connection
