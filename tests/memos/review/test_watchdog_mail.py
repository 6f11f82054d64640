"""A mail server that never answers holds up no run: the watchdog (``manage.py watchdog``, its own process
here) resumes stale runs on time while the notices' e-mails wait on a server whose greeting never comes."""

from __future__ import annotations

import os
from datetime import timedelta

import django_rq
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from memos.models import Brief, Notice, Run
from memos.pipeline.driver import QUEUE
from memos.services import notifications
from tests.mail_server import silent_mail_server
from tests.memos.crash_harness import Desk, wait_for
from tests.memos.review.support import frozen

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_watchdog_resumes_stale_runs_promptly_while_the_mail_server_never_answers(
    alice: User, bob: User
) -> None:
    version = frozen(alice)
    assert notifications.wait_for_mail()
    # As if the mail server had been down: every e-mail waits, claimed by no sender.
    Notice.objects.update(emailed_at=None, sending_since=None)
    long_ago = timezone.now() - timedelta(minutes=10)
    first = Run.objects.create(
        brief=version.brief, created_by=alice, status=Run.Status.RUNNING, stage="data", heartbeat_at=long_ago
    )
    db = connection.settings_dict
    with silent_mail_server() as port:
        desk = Desk(
            {
                **os.environ,
                "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
                "EMAIL_HOST": "127.0.0.1",
                "EMAIL_PORT": str(port),
                "EMAIL_TIMEOUT": "120",
                "PYTHONUNBUFFERED": "1",
            }
        )
        try:
            desk.start("watchdog", "--every", "0.2", "--stale-after", "60")
            wait_for(lambda: resumed(first), 60, f"the watchdog's first pass\n{desk.log_tails()}")
            # The e-mails are being tried now, on a server that never answers. A run that goes stale now is
            # resumed within a few passes all the same.
            other = Brief.objects.create(company=version.brief.company, question="Another?", owner=alice)
            second = Run.objects.create(
                brief=other, created_by=alice, status=Run.Status.RUNNING, stage="data", heartbeat_at=long_ago
            )
            wait_for(lambda: resumed(second), 5, f"the second run to be resumed\n{desk.log_tails()}")
        finally:
            desk.stop()
            # The resumed stages' jobs: no worker here takes them.
            django_rq.get_queue(QUEUE).empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    assert Notice.objects.filter(emailed_at__isnull=True).exists()


def resumed(run: Run) -> bool:
    run.refresh_from_db()
    return run.status_message.startswith("resuming")
