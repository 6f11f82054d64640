"""Who hears of a version, and how its e-mail gets there: an escalated deck reaches its analyst; an e-mail the
mail server refuses is tried again with backoff (the clock is injected) and given up after the last attempt,
which the notice then says in the app and in the admin."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memos.models import Notice
from memos.services.notifications import MAX_EMAIL_ATTEMPTS, deliver_pending
from tests.mail_server import smtp_inbox
from tests.memos.review.support import frozen

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


# --- who hears (item 9)


def test_an_escalated_deck_tells_its_analyst_as_well_as_the_committee(alice: User, bob: User) -> None:
    version = frozen(alice, kind="deck", scores={"escalated": True}, evaluated=False)
    notice = Notice.objects.get(version=version, recipient=alice)
    assert notice.event == Notice.Event.ESCALATED
    assert "never cleared the entry bar" in notice.subject
    assert "start a new deck run" in notice.body
    assert Notice.objects.filter(version=version, recipient=bob, event=Notice.Event.FROZEN).exists()


def test_a_deck_that_cleared_the_entry_bar_is_the_committees_business_only(alice: User, bob: User) -> None:
    version = frozen(alice, kind="deck", scores={"escalated": False})
    assert not Notice.objects.filter(version=version, recipient=alice).exists()
    assert Notice.objects.filter(version=version, recipient=bob, event=Notice.Event.VOTE_NEEDED).exists()


# --- e-mail retries (item 7)


def test_a_refused_email_is_tried_again_with_backoff_then_given_up_and_the_notice_says_so(
    alice: User, bob: User, admin_user: User
) -> None:
    with smtp_inbox(refusing=True) as inbox:
        version = frozen(alice)  # bob, the committee, is to hear that his vote is needed
        notice = Notice.objects.get(version=version, recipient=bob)
        now, waits = START, []
        for attempt in range(1, MAX_EMAIL_ATTEMPTS + 1):
            deliver_pending(now=now)
            notice.refresh_from_db()
            assert (notice.email_attempts, notice.emailed_at) == (attempt, None)
            assert inbox.refused.count(bob.email) == attempt
            assert "550" in notice.email_error
            if attempt == MAX_EMAIL_ATTEMPTS:
                break
            assert notice.next_email_at is not None
            waits.append(notice.next_email_at - now)
            deliver_pending(now=notice.next_email_at - timedelta(seconds=1))  # not due yet: no attempt
            assert inbox.refused.count(bob.email) == attempt
            now = notice.next_email_at
        # Each wait longer than the one before, up to a cap.
        assert waits[0] == timedelta(minutes=1)
        assert all(later >= earlier for earlier, later in itertools.pairwise(waits))
        assert waits[-1] > waits[0] and max(waits) <= timedelta(hours=1)
        assert (notice.email_failed_at, notice.next_email_at) == (now, None)
        deliver_pending(now=now + timedelta(days=1))  # given up: never tried again
        assert inbox.refused.count(bob.email) == MAX_EMAIL_ATTEMPTS and not inbox.messages

    failed = f"e-mail failed after {MAX_EMAIL_ATTEMPTS} attempts"
    reader = Client()
    reader.force_login(bob)
    assert failed in reader.get("/notices/").content.decode()
    admin = Client()
    admin.force_login(admin_user)
    assert failed in admin.get("/admin/memos/notice/").content.decode()


def test_a_mail_server_that_comes_back_gets_the_email_at_the_next_attempt(alice: User, bob: User) -> None:
    with smtp_inbox(refusing=True) as inbox:
        version = frozen(alice)
        deliver_pending(now=START)
        notice = Notice.objects.get(version=version, recipient=bob)
        assert notice.email_attempts == 1 and notice.next_email_at == START + timedelta(minutes=1)
        inbox.refusing = False
        assert deliver_pending(now=START + timedelta(minutes=1)) == 1
    notice.refresh_from_db()
    assert notice.emailed_at is not None and notice.email_error == "" and notice.next_email_at is None
    (mail,) = inbox.to(bob.email)
    assert "your vote is needed" in str(mail["Subject"])
