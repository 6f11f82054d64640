"""Shared fixtures: the cast (alice the analyst owns, bob sits on the committee, charlie is an outsider)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Django is imported inside fixtures so the pure agents/ tests also run with `-p no:django`.

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _background_threads_let_go() -> Iterator[None]:
    """The pipeline's thread pool outlives a stage and keeps its database connections; after a test they
    are closed (and the notice sender has finished), so the test database can be flushed and dropped with
    nobody connected to it."""
    yield
    notifications = sys.modules.get("memos.services.notifications")
    if notifications is not None:
        # A run's notices are e-mailed in the background (a worker waits for them before it exits): their
        # sweep ends, and closes its connection, before the next test changes the tables it reads.
        notifications.wait_for_mail()
    version_files = sys.modules.get("memos.services.version_files")
    if version_files is not None:  # so do the PDFs a test's printer thread prints
        version_files.wait_for_prints()
    fanout = sys.modules.get("memos.pipeline.fanout")
    if fanout is not None:
        fanout.shutdown()


@pytest.fixture(autouse=True)
def _settings_left_as_found() -> Iterator[None]:
    """A test leaves Django's settings as it found them. Overrides undone out of order (pytest-django's
    ``settings`` fixture assigned inside a ``with override_settings``: the ``with`` restores the state before
    both, then the fixture restores the ``with``'s) left the fake server's LLM settings on every later test
    of that worker, and a test far away failed depending on the order xdist chose: the leak is named here,
    at the test that made it, and undone."""
    conf = sys.modules.get("django.conf")
    found = conf.settings._wrapped if conf is not None and conf.settings.configured else None
    yield
    if found is None or conf is None or conf.settings._wrapped is found:
        return
    conf.settings._wrapped = found
    pytest.fail("this test left Django's settings overridden (overrides undone out of order?)")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database, with nobody left on it when it is dropped. A connection a process or
    thread of some test still held (a worker's pool, a thread that outlived its test) made the drop fail the
    session's last test at teardown ("is being accessed by other users"): they are ended first."""
    yield
    from django.db import connection

    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")  # no input in it
        for _ in range(50):  # a terminated backend takes a moment to go
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone() == (0,):
                break
            time.sleep(0.1)
    with django_db_blocker.unblock():
        connection.close()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the real-data folder {SHARED_DATA} is missing; tests read it from ../shared/data")
    return SHARED_DATA


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        pytest.fail("REDIS_URL is not set; run the suite through scripts/test.sh")
    return url


def _user(username: str, group: str | None) -> User:
    from django.contrib.auth.models import User

    from memos.services.accounts import ensure_groups

    groups = ensure_groups()
    user = User.objects.create_user(
        username=username, password=f"{username}-secret-pass", email=f"{username}@example.org"
    )
    if group:
        user.groups.add(groups[group])
    return user


@pytest.fixture
def alice(db: None) -> User:
    return _user("alice", "analyst")


@pytest.fixture
def bob(db: None) -> User:
    return _user("bob", "committee")


@pytest.fixture
def charlie(db: None) -> User:
    return _user("charlie", None)


@pytest.fixture
def admin_user(db: None) -> User:
    from django.contrib.auth.models import User

    return User.objects.create_superuser(
        username="root", password="root-secret-pass", email="root@example.org"
    )
