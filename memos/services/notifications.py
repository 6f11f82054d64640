"""Notices about versions: one row per person, version and event (a database constraint: nobody hears of the
same thing twice), shown in the app and sent by e-mail.

Rows are written in the transaction of the change they announce; the e-mails go after it commits, from one
background sender thread per process (a slow mail server never holds up a run or a page). A sender claims a
notice before sending it (``sending_since``) and marks it sent after, so two processes never send the same
notice; a claim older than ``STALE_CLAIM`` (its sender died mid-way) is taken over by the next sweep.

An e-mail the mail server refuses (or that times out) is tried again with backoff: one minute after the first
failure, doubling, at most an hour apart (``retry_delay``), ``MAX_EMAIL_ATTEMPTS`` attempts in all; then it is
given up (``email_failed_at``) and the notice says so in the app and in the admin. Each attempt is counted
on the notice and the next one is not made before ``next_email_at``. The retries are swept by the same
background thread, which the watchdog wakes on each of its passes (``sweep_in_background``): the watchdog's
loop only wakes it, so a mail server that never answers delays no run's resumption. The mail server decides
the rest: SMTP when ``EMAIL_HOST`` is set, the console otherwise (settings).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from memos.models import ArtefactVersion, Notice
from memos.pipeline.judge_families import badges
from memos.services.background import ProcessThread
from memos.services.surfaces import mail_page_of

log = logging.getLogger(__name__)

STALE_CLAIM = timedelta(minutes=5)
MAX_EMAIL_ATTEMPTS = 8
FIRST_RETRY = timedelta(minutes=1)
LONGEST_WAIT = timedelta(hours=1)
Event = Notice.Event

_WHAT: dict[str, str] = {
    Event.FROZEN: "is ready for review",
    Event.VOTE_NEEDED: "is ready: your vote is needed",
    Event.QUORUM_REACHED: "has its quorum: you may ask for its approval",
    Event.CHANGES_REQUESTED: "came back with changes requested",
    Event.APPROVED: "was approved for publication",
    Event.PUBLISHED: "was published",
    Event.FALSIFIER_HIT: "had a falsifier hit: the position is re-opened",
    Event.ESCALATED: "never cleared the entry bar: it needs you",
    Event.PARTIAL: "is partial: parts of its run did not finish, and it needs you",
}


def members(group: str) -> list[User]:
    """Active users of a role's group, in a stable order."""
    return list(User.objects.filter(groups__name=group, is_active=True).order_by("username").distinct())


def members_of(*groups: str) -> dict[str, list[User]]:
    """``members`` of several roles' groups, in one query."""
    found: dict[str, list[User]] = {group: [] for group in groups}
    rows = User.objects.filter(groups__name__in=groups, is_active=True).annotate(group=F("groups__name"))
    for user in rows.order_by("username"):
        found[user.group].append(user)
    return found


def version_url(version: ArtefactVersion) -> str:
    """The version's absolute address (SITE_URL): the login page sends a signed-out reader back to it."""
    return settings.SITE_URL.rstrip("/") + reverse("version", args=[version.pk])


def notify(*, version: ArtefactVersion, event: str, recipients: Iterable[User], note: str = "") -> None:
    """A notice for each recipient who has not had this one for this version; e-mails after commit."""
    people = {user.pk: user for user in recipients if user.is_active}
    if not people:
        return
    subject, body = _message(version, event, note)
    link = version_url(version)
    rows = [
        Notice(recipient=user, version=version, event=event, subject=subject, body=body, link=link)
        for user in people.values()
    ]
    # The constraint decides who has had it already, under concurrency too: no read-then-write race.
    Notice.objects.bulk_create(rows, ignore_conflicts=True)
    transaction.on_commit(_sender.wake)


def without_score(changelog: str) -> str:
    """A version's changelog line without the score it ends with (memos.services.versions.changelog)."""
    return changelog.rsplit("; ", 1)[0]


def _message(version: ArtefactVersion, event: str, note: str) -> tuple[str, str]:
    brief = version.brief
    what = _WHAT.get(event, event)
    # A brief's memos and decks are lines of their own: the subject names which one (a reader's notices list
    # both), and a delta is against the version before in the same line, on the same scale.
    subject = f"[Analyst Desk] {brief.subject} {version.named} {what}"[:200]
    if version.score is None:
        score = "Score: not evaluated (it cannot be voted on until an evaluation succeeds)"
    else:
        moved = (
            ""
            if version.score_delta is None
            else f" ({version.score_delta:+g} against the previous {version.kind})"
        )
        score = f"Score: {version.score_label} {version.score:g}{moved}"
    changes = version.changelog
    page = mail_page_of(version)
    if page.sealed is not None:
        # One message for every recipient, and a committee member may not see the evaluator's scores until
        # they have scored the version themselves (a deck's judge): they are on its page for whoever may.
        label = f"{version.score_label}, " if version.score_label else ""
        score = f"Score: {label}on its page, for whoever may see it before scoring it"
        changes = without_score(changes)
    lines = [
        f"{brief.subject} · {version.question}",
        f"{version.named.capitalize()}, {version.get_status_display().lower()}.",
        score,
        f"Changes: {changes}",
    ]
    # Seed 003: a verdict from the model family of the work it judges is said so wherever it is shown.
    lines += badges(version.verdict_families)
    more = page.mail(version)
    if more:
        lines += ["", *more]
    if note:
        lines.append(f"Note: {note}")
    lines += ["", f"Open it: {version_url(version)}", "(you will be asked to sign in first)"]
    return subject, "\n".join(lines)


def retry_delay(failures: int) -> timedelta:
    """How long to wait after the ``failures``-th failed attempt: a minute, doubling, at most an hour."""
    return min(FIRST_RETRY * (1 << max(failures - 1, 0)), LONGEST_WAIT)


def deliver_pending(*, now: datetime | None = None, limit: int = 200) -> int:
    """Send every notice whose e-mail is due (not sent, not given up, its next attempt's time passed) and
    that nobody is sending now; how many were sent. ``now`` is the clock (a test passes its own)."""
    now = now or timezone.now()
    with transaction.atomic():
        claimable = (
            Notice.objects.select_for_update(skip_locked=True)
            .filter(emailed_at__isnull=True, email_failed_at__isnull=True)
            .exclude(recipient__email="")  # in the app only: nowhere to send it
            .filter(Q(sending_since__isnull=True) | Q(sending_since__lt=now - STALE_CLAIM))
            .filter(Q(next_email_at__isnull=True) | Q(next_email_at__lte=now))
            .order_by("id")
            .values_list("pk", flat=True)[:limit]
        )
        ids = list(claimable)
        Notice.objects.filter(pk__in=ids).update(sending_since=now)
    sent = 0
    for notice in Notice.objects.filter(pk__in=ids).select_related("recipient").order_by("id"):
        sent += _send(notice, now)
    return sent


def _send(notice: Notice, now: datetime) -> int:
    address = notice.recipient.email
    # Written only while this sweep's claim stands: a sender whose claim went stale and was taken over
    # does not write over the one that took it.
    mine = Notice.objects.filter(pk=notice.pk, sending_since=now)
    try:
        send_mail(notice.subject, notice.body, settings.DEFAULT_FROM_EMAIL, [address])
    except Exception as exc:  # noqa: BLE001 - any mail failure: counted, tried again later, say why
        failures = notice.email_attempts + 1
        error = str(exc)[:1000]
        if failures >= MAX_EMAIL_ATTEMPTS:
            log.warning(
                "gave up e-mailing notice %s to %s after %s attempts: %s", notice.pk, address, failures, exc
            )
            mine.update(
                email_attempts=failures,
                email_error=error,
                sending_since=None,
                next_email_at=None,
                email_failed_at=now,
            )
        else:
            log.warning(
                "could not e-mail notice %s to %s (attempt %s): %s", notice.pk, address, failures, exc
            )
            mine.update(
                email_attempts=failures,
                email_error=error,
                sending_since=None,
                next_email_at=now + retry_delay(failures),
            )
        return 0
    mine.update(emailed_at=now, email_error="", next_email_at=None)
    return 1


class _Sender:
    """This process's e-mail sweeps, on its thread (memos.services.background), woken after a commit."""

    def __init__(self) -> None:
        self._thread: ProcessThread[None] = ProcessThread(
            "notice-mail",
            lambda wakes: deliver_pending(),
            failed="sending notices failed; the next sweep tries again",
        )

    def wake(self) -> None:
        if settings.NOTICES_SEND_INLINE:
            deliver_pending()
            return
        self.wake_in_background()

    def wake_in_background(self) -> None:
        """A sweep on this process's sender thread, whatever the settings say: the caller never waits."""
        self._thread.put(None)

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """For tests and a worker about to exit: wait until every wake so far has been handled."""
        return self._thread.wait_idle(timeout_s)


_sender = _Sender()


def wait_for_mail(timeout_s: float = 10.0) -> bool:
    return _sender.wait_idle(timeout_s)


def sweep_in_background() -> None:
    """Send what is due (retries included) on this process's sender thread; returns at once. The watchdog
    calls it on each pass: a mail server that never answers holds up that thread, never the caller."""
    _sender.wake_in_background()


def unread_count(user: Any) -> int:
    return Notice.objects.filter(recipient=user, read_at__isnull=True).count() if user.is_authenticated else 0
