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
from django.core.cache.backends.base import BaseCache
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


def cached(key: str, build: Callable[[], T], *, type_: type[T]) -> T:
    """The value under ``key``, or ``build()``'s, stored there for the next reader (of any web process)."""
    try:
        found = shared_cache().get(key)
    except (RedisError, OSError, pickle.UnpicklingError, AttributeError, ImportError):
        # Redis away, or an entry this code cannot read: compute it.
        log.warning("could not read %s from the cache", key, exc_info=True)
        found = None
    if isinstance(found, type_):
        return found
    value = build()
    try:
        shared_cache().set(key, value)
    except (RedisError, OSError, pickle.PicklingError, TypeError, AttributeError):
        log.warning("could not keep %s in the cache", key, exc_info=True)
    return value
