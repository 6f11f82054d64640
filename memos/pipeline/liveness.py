"""Who is working on a run, and whether they are still alive.

``RunLock`` (a Redis key with a TTL, refreshed while the stage runs) keeps two workers off one run;
``Heartbeat`` stamps ``Run.heartbeat_at`` every ``RUN_HEARTBEAT_S`` seconds from a background thread and
refreshes the lock. A killed work-horse stops both, so the lock expires and ``resume_stale_runs`` (the
watchdog) sees the stale heartbeat and re-enqueues the run's current stage for another worker.
"""

from __future__ import annotations

import threading
import uuid
from types import TracebackType
from typing import Self

import redis
from django.conf import settings
from django.db import close_old_connections

from memos.pipeline.steps import touch

LOCK_PREFIX = "analyst-desk:run-lock:"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def lock_ttl_s() -> int:
    return max(2, int(settings.RUN_STALE_AFTER_S))


class RunLock:
    def __init__(self, run_id: str) -> None:
        self.key = LOCK_PREFIX + run_id
        self.token = uuid.uuid4().hex
        self.acquired = False
        self._client = _client()

    def __enter__(self) -> Self:
        self.acquired = bool(self._client.set(self.key, self.token, nx=True, ex=lock_ttl_s()))
        return self

    def refresh(self) -> None:
        if self.acquired and self._client.get(self.key) == self.token.encode():
            self._client.expire(self.key, lock_ttl_s())

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.acquired and self._client.get(self.key) == self.token.encode():
            self._client.delete(self.key)
        self._client.close()


class Heartbeat:
    def __init__(self, run_id: str, lock: RunLock | None = None) -> None:
        self.run_id = run_id
        self.lock = lock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{run_id[:8]}", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(float(settings.RUN_HEARTBEAT_S)):
                touch(self.run_id)
                if self.lock is not None:
                    self.lock.refresh()
        finally:
            close_old_connections()
