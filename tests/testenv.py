"""Loaded by pytest before Django (``-p tests.testenv``): test defaults that make a real provider unreachable.

scripts/test.sh exports the real service addresses; these are only defaults for anything it did not set.
"""

import os
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("ANALYST_DESK_TESTING", "true")
os.environ.setdefault("DJANGO_DEBUG", "false")
# A loopback port nothing listens on, a fake key, and a guard that refuses any non-loopback endpoint:
# a test that forgets to start the fake server fails fast instead of calling a hosted model.
os.environ.setdefault("LLM_BASE_URL", "http://127.0.0.1:9/v1")
os.environ.setdefault("LLM_API_KEY", "test-key-not-a-real-secret")
os.environ.setdefault("LLM_MODEL", "fake-model")
os.environ["LLM_LOOPBACK_ONLY"] = "true"
os.environ.setdefault("DATA_MODE", "snapshot")
for name in [key for key in os.environ if key.startswith(("LLM_MODEL_", "LLM_BASE_URL_", "LLM_API_KEY_"))]:
    del os.environ[name]

# Parallel workers (pytest-xdist, ``-n``; scripts/test.sh runs the default suite so). pytest-django gives each
# worker a test database of its own (test_analyst_desk_gw0, _gw1, ...); Redis databases are split here, before
# Django reads REDIS_URL, so a worker's queue, locks, cache and channel layer never meet another's. The RQ
# workers, watchdogs and commands a test starts inherit this REDIS_URL and the worker's test database name
# (tests/memos/crash_harness.py desk_env), so they stay inside the worker's share too.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... or "" in a plain pytest run
# Each worker's Redis databases: its main one (slot 0) and one its worker-stop tests flush at will (slot 1).
REDIS_SLOTS = 2
# Databases 0-15 keep what they were before workers (the suite's 0, the worker-stop tests' 13, the browser
# run's 14); the workers' start at 16. scripts/lib.sh starts the test Redis with 64 databases: 24 workers.
FIRST_WORKER_REDIS_DB = 16
SERIAL_REDIS_DBS = (None, 13)  # None: the database REDIS_URL names


def redis_db(slot: int = 0) -> int | None:
    """The Redis database number of this process's ``slot`` (None: REDIS_URL's own, in a plain run)."""
    if not 0 <= slot < REDIS_SLOTS:
        raise ValueError(f"Redis slot {slot} is not one of the {REDIS_SLOTS} each worker has")
    if not XDIST_WORKER:
        return SERIAL_REDIS_DBS[slot]
    return FIRST_WORKER_REDIS_DB + REDIS_SLOTS * int(XDIST_WORKER.removeprefix("gw")) + slot


def redis_url_for(url: str, slot: int = 0) -> str:
    """``url`` pointed at this process's Redis database ``slot``."""
    db = redis_db(slot)
    if db is None:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


if XDIST_WORKER and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = redis_url_for(os.environ["REDIS_URL"])
