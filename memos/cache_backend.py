"""The shared cache's backend: Django's Redis cache, with one redis-py client per connection pool.

Django's client makes a new ``redis.Redis`` object around its pool for each call; making one took 0.4 ms of
CPU, a tenth of a kept page's whole answer (memos.views.kept_pages; README, Performance: pages). A redis-py
client is thread-safe (each command takes a connection from the pool), and its pool starts afresh after a
fork, so one kept per pool serves every thread of the process.
"""

from __future__ import annotations

from typing import Any, cast

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _OneClientPerPool(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        django_client = cast(Any, self)  # its pools and redis-py's class are private, and not in the stubs
        pool = django_client._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = django_client._client(connection_pool=pool)
        return client


class DeskRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _OneClientPerPool
