"""A version's status moves only from the status its mover expects (a conditional UPDATE), so a newer version
freezing while a reviewer publishes never supersedes the version just published. The race is driven on real
transactions in two threads: the publication holds its row uncommitted until the freeze is seen waiting on a
lock in PostgreSQL (no sleeps), then commits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections, transaction

from memos.models import ArtefactVersion, AuditEvent, Motion, ReviewPolicy
from memos.services import review
from memos.services.accounts import Roles
from tests.memos.review.support import frozen, member

pytestmark = pytest.mark.django_db(transaction=True)

Status = ArtefactVersion.Status
WAIT_S = 20.0


def waiting_on_a_lock() -> bool:
    """Some other session of this database is blocked on a row lock now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        found = cursor.fetchone()
    return bool(found and found[0])


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def in_thread(errors: list[BaseException], body: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        try:
            body()
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which fails with it
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def approved(alice: User, bob: User) -> tuple[ArtefactVersion, User]:
    """v1 of alice's brief, approved by rev on two approving votes: ready to publish."""
    ReviewPolicy.objects.update_or_create(pk=1, defaults={"min_votes": 2, "approval_share": 0.5})
    rev = member("rev", Roles.REVIEWER)
    v1 = frozen(alice)
    for voter in (bob, member("carol", Roles.COMMITTEE)):
        review.cast_vote(version=v1, member=voter, choice="approve")
    review.approve(version=v1, reviewer=rev)
    return v1, rev


def test_a_version_freezing_while_a_reviewer_publishes_leaves_the_published_version_published(
    approved: tuple[ArtefactVersion, User], alice: User
) -> None:
    v1, rev = approved
    published, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def publish() -> None:
        with transaction.atomic():
            review.publish(version=v1, reviewer=rev)
            published.set()
            assert release.wait(WAIT_S), "never released"

    def freeze_v2() -> None:
        assert published.wait(WAIT_S), "never published"
        frozen(alice, brief=v1.brief, thesis="Services keep growing, and faster.")

    publisher = in_thread(errors, publish)
    freezer = in_thread(errors, freeze_v2)
    try:
        # The freeze reached a row the uncommitted publication holds: it waits for it.
        until(lambda: waiting_on_a_lock() or bool(errors), "the freeze to wait on the publication")
    finally:
        release.set()
        publisher.join(WAIT_S)
        freezer.join(WAIT_S)
    assert not errors, errors
    assert not publisher.is_alive() and not freezer.is_alive()

    v1.refresh_from_db()
    v2 = ArtefactVersion.objects.get(brief=v1.brief, number=2)
    assert (v1.status, v2.status) == (Status.PUBLISHED, Status.READY_FOR_REVIEW)
    assert v1.published_at is not None
    assert not v1.audit.filter(action=AuditEvent.Action.SUPERSEDED).exists()
    assert Motion.objects.get(version=v1).closed_because == "approved"
    assert Motion.objects.get(version=v2).is_open


def test_publishing_v2_while_v3_freezes_supersedes_v1_and_leaves_v2_published(
    approved: tuple[ArtefactVersion, User], alice: User, bob: User
) -> None:
    """The older published version gives way to the newer publication, and only it: the freeze of v3 meanwhile
    supersedes nothing that was published."""
    v1, rev = approved
    review.publish(version=v1, reviewer=rev)
    v2 = frozen(alice, brief=v1.brief, thesis="Services keep growing, and faster.")
    for voter in (bob, User.objects.get(username="carol")):
        review.cast_vote(version=v2, member=voter, choice="approve")
    review.approve(version=v2, reviewer=rev)
    published, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def publish() -> None:
        with transaction.atomic():
            review.publish(version=v2, reviewer=rev)
            published.set()
            assert release.wait(WAIT_S), "never released"

    def freeze_v3() -> None:
        assert published.wait(WAIT_S), "never published"
        frozen(alice, brief=v1.brief, thesis="Services keep growing, and faster still.")

    publisher = in_thread(errors, publish)
    freezer = in_thread(errors, freeze_v3)
    try:
        until(lambda: waiting_on_a_lock() or bool(errors), "the freeze to wait on the publication")
    finally:
        release.set()
        publisher.join(WAIT_S)
        freezer.join(WAIT_S)
    assert not errors, errors
    statuses = dict(ArtefactVersion.objects.filter(brief=v1.brief).values_list("number", "status"))
    assert statuses == {1: Status.SUPERSEDED, 2: Status.PUBLISHED, 3: Status.READY_FOR_REVIEW}
    v1.refresh_from_db()
    assert v1.published_at is not None  # an executive still reads what was published then
