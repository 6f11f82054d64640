"""This process's one Redis client, shared by the engine (locks, heartbeats, the LLM concurrency bound), the
live pages (the per-user socket bound) and the data sources (the shared SEC rate limit)."""

from __future__ import annotations

import threading

import redis
from django.conf import settings

_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def redis_client() -> redis.Redis:
    """This process's client for ``REDIS_URL``, shared by its threads and kept for its life.

    Its pool keeps connections open between claims, calls and runs: a new client per claim or per gateway
    paid a connect and a handshake on a run's path (a few ms each, more when several threads connected at
    once). redis-py gives a forked child (an RQ work-horse) a fresh pool of its own.
    """
    url = settings.REDIS_URL
    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url)
        return client
