"""What pages (and the data stage's evidence selection) compute from rows or files that cannot change, kept
in the shared cache (Redis) under keys naming what it was made of.

A key names the rows or files a value was computed from (a finished run's lease and status, the fact store's
version, a folder's fingerprint) and the code that computed it: ``code_version`` changes whenever a module or
a template of the app does, so a new release never reads what an older one stored. Only what every reader of
a page may see goes in: views check access first, and render what depends on the reader afterwards.
The cache is a help, not a dependency: when Redis does not answer, the value is computed as if never cached.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connection
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
T = TypeVar("T")
CODE_FOLDERS = ("agency", "agents", "memos", "templates", "prompts")
CODE_SUFFIXES = {".py", ".html", ".md", ".txt"}


@lru_cache(maxsize=1)
def shared_cache() -> BaseCache:
    """One cache client (and Redis connection pool) per process. ``django.core.cache.cache`` is one per
    thread, and the ASGI server runs each request's view in a thread of its own: through it, every page
    would open a new connection to Redis. redis-py's pool is thread-safe, and starts afresh after a fork."""
    return caches.create_connection("default")


@lru_cache(maxsize=1)
def code_version() -> str:
    """A fingerprint of the app's code and templates (names, sizes, modification times), once per process."""
    digest = hashlib.sha256()
    for folder in CODE_FOLDERS:
        root = settings.BASE_DIR / folder
        for path in sorted(root.rglob("*")):
            if path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                stat = path.stat()
                digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def cache_key(kind: str, *parts: object) -> str:
    named = hashlib.sha256("\0".join(str(part) for part in parts).encode()).hexdigest()[:32]
    return f"page:{kind}:{code_version()}:{named}"


def committed_state() -> str | None:
    """A name for everything committed in the database so far, in one query; None inside a transaction.

    PostgreSQL's snapshot of this statement says which transactions it sees as committed: two statements
    with the same snapshot see the same rows of every table, and any commit since gives a new one (xids are
    64-bit there, never reused). The server's start time and the database's name tell a recreated database
    (tests, a new cluster) from an old one whose entries Redis may still hold. Read it before the rows a
    value is drawn from: a value is then at least as new as the snapshot it is kept under.

    Inside a transaction (an atomic block: a test's, or a view's own) the snapshot does not change with the
    transaction's own writes, so nothing may be kept under it: None says "compute it"."""
    if connection.in_atomic_block:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database(), pg_postmaster_start_time(), pg_current_snapshot()::text")
        database, started, snapshot = cursor.fetchone()
    return f"{database}/{started.timestamp()}/{snapshot}"


def cached(key: str, build: Callable[[], T], *, type_: type[T]) -> T:
    """The value under ``key``, or ``build()``'s, stored there for the next reader (of any web process)."""
    found = cached_value(key, type_)
    if found is not None:
        return found
    value = build()
    keep(key, value)
    return value


def cached_value(key: str, type_: type[T]) -> T | None:
    """The value under ``key`` when there is one of ``type_``."""
    try:
        found = shared_cache().get(key)
    except (RedisError, OSError, pickle.UnpicklingError, AttributeError, ImportError):
        # Redis away, or an entry this code cannot read: compute it.
        log.warning("could not read %s from the cache", key, exc_info=True)
        return None
    return found if isinstance(found, type_) else None


def keep(key: str, value: object, *, timeout: int = DEFAULT_TIMEOUT) -> None:
    """Store ``value`` under ``key`` for the next reader (for ``timeout`` seconds, else the cache's
    default); a cache that does not answer keeps nothing."""
    try:
        shared_cache().set(key, value, timeout=timeout)
    except (RedisError, OSError, pickle.PicklingError, TypeError, AttributeError):
        log.warning("could not keep %s in the cache", key, exc_info=True)
