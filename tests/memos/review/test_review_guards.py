"""Votes, motions and notices are guarded by the database (migration 0013's triggers), not by ``save()``: each
write path below (a model's save, a queryset update, bulk_update, delete, raw SQL) is tried inside its own
savepoint, and what the history says is append-only stays as it was. What the review moves on purpose
(closing a motion once, changing a vote while the vote is open, a notice's reading and its e-mail) still
moves."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Field, Model, ProtectedError
from django.utils import timezone

from memos.models import ArtefactVersion, AuditEvent, Motion, Notice, ReviewPolicy, Vote
from memos.services import review
from memos.services.accounts import Roles
from memos.services.review import ReviewRefused
from memos.services.versions import close_motion
from tests.memos.review.support import frozen, member

pytestmark = pytest.mark.django_db

LATER = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def version(alice: User, bob: User) -> ArtefactVersion:
    ReviewPolicy.objects.update_or_create(pk=1, defaults={"min_votes": 2, "approval_share": 0.5})
    return frozen(alice)


def row(model: type[Model], pk: int) -> str:
    """The row exactly as PostgreSQL holds it."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT to_jsonb(t)::text FROM {model._meta.db_table} t WHERE id = %s", [pk])
        found = cursor.fetchone()
    assert found is not None, f"{model.__name__} {pk} is gone"
    return str(found[0])


def refused(attempt: Callable[[], Any], error: type[Exception] = IntegrityError) -> str:
    with pytest.raises(error) as caught, transaction.atomic():
        attempt()
    return str(caught.value)


def raw(sql: str, *params: Any) -> Callable[[], None]:
    def attempt() -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))

    return attempt


def every_path(model: type[Model], pk: int, column: str, value: Any, sql_value: str) -> list[str]:
    """A changed ``column`` tried through save(), update(), bulk_update() and raw SQL: the four messages."""
    table = model._meta.db_table
    field = model._meta.get_field(column)
    assert isinstance(field, Field)
    attname = field.attname

    def saved() -> None:
        stale = model.objects.get(pk=pk)  # type: ignore[attr-defined]
        setattr(stale, column, value)
        stale.save()

    def bulk() -> None:
        stale = model.objects.get(pk=pk)  # type: ignore[attr-defined]
        setattr(stale, column, value)
        model.objects.bulk_update([stale], [column])  # type: ignore[attr-defined]

    return [
        refused(saved),
        refused(lambda: model.objects.filter(pk=pk).update(**{column: value})),  # type: ignore[attr-defined]
        refused(bulk),
        refused(raw(f"UPDATE {table} SET {attname} = {sql_value} WHERE id = %s", pk)),
    ]


def every_delete(model: type[Model], pk: int) -> list[str]:
    return [
        refused(model.objects.get(pk=pk).delete),  # type: ignore[attr-defined]
        refused(model.objects.filter(pk=pk).delete),  # type: ignore[attr-defined]
        refused(model.objects.all().delete),  # type: ignore[attr-defined]
        refused(raw(f"DELETE FROM {model._meta.db_table} WHERE id = %s", pk)),
    ]


# --- motions


def test_a_motions_version_opening_and_pinned_policy_never_change(version: ArtefactVersion) -> None:
    motion = Motion.objects.get(version=version)
    before = row(Motion, motion.pk)
    other = frozen(version.brief.owner, thesis="Another brief's version.")  # its own brief: nothing closes
    for column, value, sql in (
        ("min_votes", 1, "1"),
        ("approval_share", 0.0, "0"),
        ("opened_at", LATER, "'2030-01-01'"),
        ("version", other, str(other.pk)),
    ):
        for message in every_path(Motion, motion.pk, column, value, sql):
            assert "keeps its version, its opening and the policy it pinned" in message, column
    assert row(Motion, motion.pk) == before


def test_a_motion_closes_once_and_never_reopens_or_changes_after(version: ArtefactVersion) -> None:
    motion = Motion.objects.get(version=version)
    close_motion(version=version, because="changes requested")
    closed = Motion.objects.get(pk=motion.pk)
    assert closed.closed_at is not None and closed.closed_because == "changes requested"
    before = row(Motion, motion.pk)
    for column, value, sql in (
        ("closed_at", None, "NULL"),
        ("closed_at", LATER, "'2030-01-01'"),
        ("closed_because", "approved", "'approved'"),
    ):
        for message in every_path(Motion, motion.pk, column, value, sql):
            assert "is closed: it never changes again" in message, column
    close_motion(
        version=version, because="approved"
    )  # closing again finds nothing open: no change, no audit row
    assert row(Motion, motion.pk) == before
    assert version.audit.filter(action=AuditEvent.Action.MOTION_CLOSED).count() == 1


def test_motions_are_never_deleted(version: ArtefactVersion) -> None:
    motion = Motion.objects.get(version=version)
    before = row(Motion, motion.pk)
    for message in every_delete(Motion, motion.pk):
        assert "is never deleted" in message
    assert row(Motion, motion.pk) == before


# --- votes


def test_a_vote_changes_while_its_motion_is_open_and_never_after_it_closed(
    version: ArtefactVersion, bob: User
) -> None:
    cast = review.cast_vote(version=version, member=bob, choice="approve")
    Vote.objects.filter(pk=cast.pk).update(choice="reject", rationale="Changed my mind.")  # open: it may
    close_motion(version=version, because="changes requested")
    before = row(Vote, cast.pk)
    for column, value, sql in (("choice", "approve", "'approve'"), ("rationale", "Edited later.", "'x'")):
        for message in every_path(Vote, cast.pk, column, value, sql):
            assert "votes are cast and changed only while it is open" in message, column
    assert row(Vote, cast.pk) == before


def test_no_vote_is_inserted_on_a_closed_motion_or_a_version_without_one(
    version: ArtefactVersion, bob: User, alice: User
) -> None:
    close_motion(version=version, because="changes requested")
    assert "only while it is open" in refused(
        lambda: Vote.objects.create(version=version, member=bob, choice="approve")
    )
    unevaluated = frozen(alice, evaluated=False, thesis="Not evaluated.")
    assert not Motion.objects.filter(version=unevaluated).exists()
    assert "only while it is open" in refused(
        raw(
            "INSERT INTO memos_vote (version_id, member_id, choice, rationale, cast_at, changed_at) "
            "VALUES (%s, %s, 'approve', '', now(), now())",
            unevaluated.pk,
            bob.pk,
        )
    )
    assert not Vote.objects.exists()


def test_a_votes_member_version_and_casting_time_never_change(version: ArtefactVersion, bob: User) -> None:
    carol = member("carol", Roles.COMMITTEE)
    cast = review.cast_vote(version=version, member=bob, choice="approve")
    before = row(Vote, cast.pk)
    for column, value, sql in (
        ("member", carol, str(carol.pk)),
        ("cast_at", LATER, "'2030-01-01'"),
    ):
        for message in every_path(Vote, cast.pk, column, value, sql):
            assert "keeps its member, its version and when it was cast" in message, column
    assert row(Vote, cast.pk) == before


def test_the_database_locks_the_vote_of_a_member_who_asked_for_the_approval(
    version: ArtefactVersion, bob: User
) -> None:
    rita = member("rita", Roles.COMMITTEE, Roles.REVIEWER)
    cast = review.cast_vote(version=version, member=rita, choice="abstain", rationale="Not sure yet.")
    with pytest.raises(ReviewRefused):
        review.approve(version=version, reviewer=rita)
    before = row(Vote, cast.pk)
    for message in every_path(Vote, cast.pk, "choice", "approve", "'approve'"):
        assert "their vote is locked" in message
    assert row(Vote, cast.pk) == before
    # Another member's vote still moves.
    review.cast_vote(version=version, member=bob, choice="approve")
    assert review.cast_vote(version=version, member=bob, choice="reject", rationale="No.").choice == "reject"


def test_votes_are_never_deleted_nor_the_members_who_cast_them(version: ArtefactVersion, bob: User) -> None:
    cast = review.cast_vote(version=version, member=bob, choice="approve")
    before = row(Vote, cast.pk)
    for message in every_delete(Vote, cast.pk):
        assert "votes are never deleted" in message
    refused(bob.delete, ProtectedError)
    assert row(Vote, cast.pk) == before


# --- notices


def test_a_notices_recipient_version_event_and_words_never_change(
    version: ArtefactVersion, bob: User, alice: User
) -> None:
    notice = Notice.objects.get(version=version, recipient=bob)
    other = frozen(alice, thesis="Another version.")
    before = row(Notice, notice.pk)
    for column, value, sql in (
        ("recipient", alice, str(alice.pk)),
        ("version", other, str(other.pk)),
        ("event", Notice.Event.PUBLISHED, "'published'"),
        ("subject", "[Analyst Desk] AAPL v1 was published", "'edited'"),
        ("body", "Approve it now.", "'edited'"),
        ("link", "https://evil.example/", "'https://evil.example/'"),
        ("created_at", LATER, "'2030-01-01'"),
    ):
        for message in every_path(Notice, notice.pk, column, value, sql):
            assert "keeps its recipient, version, event and words" in message, column
    assert row(Notice, notice.pk) == before


def test_a_notices_reading_and_email_bookkeeping_still_move(version: ArtefactVersion, bob: User) -> None:
    notice = Notice.objects.get(version=version, recipient=bob)
    now = timezone.now()
    Notice.objects.filter(pk=notice.pk).update(
        read_at=now,
        sending_since=now,
        email_attempts=2,
        next_email_at=now,
        email_error="421 try later",
    )
    Notice.objects.filter(pk=notice.pk).update(
        sending_since=None, emailed_at=now, email_error="", next_email_at=None, email_failed_at=None
    )
    stored = Notice.objects.get(pk=notice.pk)
    assert (stored.read_at, stored.emailed_at, stored.email_attempts) == (now, now, 2)


def test_notices_are_never_deleted_nor_the_people_they_were_sent_to(
    version: ArtefactVersion, bob: User
) -> None:
    notice = Notice.objects.get(version=version, recipient=bob)
    before = row(Notice, notice.pk)
    for message in every_delete(Notice, notice.pk):
        assert "notices are never deleted" in message
    refused(bob.delete, ProtectedError)
    assert row(Notice, notice.pk) == before
