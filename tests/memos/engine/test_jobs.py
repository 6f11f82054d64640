"""The admin queues a background refresh; a real RQ worker process (not an in-process shortcut) runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import django_rq
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from memos.models import Company, FactRecord
from tests.conftest import ROOT

# The worker is another process: it must see rows this test committed, so no wrapping transaction.
pytestmark = pytest.mark.django_db(transaction=True)

# The worker run.sh runs (it builds its LLM clients before forking), not a plain rqworker.
DESK_WORKER = "memos.pipeline.worker.DeskWorker"


def _worker_env() -> dict[str, str]:
    """The test process's environment, pointed at the test database pytest-django created."""
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
    }


def _run_burst_worker() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "rqworker", "default", "--burst", "--worker-class", DESK_WORKER],
        cwd=ROOT,
        env=_worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_admin_refresh_action_queues_a_job_the_worker_turns_into_cited_facts(
    client: Client, admin_user: User, redis_url: str
) -> None:
    queue = django_rq.get_queue("default")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    nvda = Company.objects.create(ticker="NVDA", name="NVIDIA CORP")
    client.force_login(admin_user)

    page = client.post(
        reverse("admin:memos_company_changelist"),
        {"action": "refresh_facts", "_selected_action": [nvda.pk]},
        follow=True,
    )

    assert "Queued a refresh of SEC facts for NVDA" in page.content.decode()
    assert queue.count == 1
    assert not FactRecord.objects.exists()  # nothing happens until a worker picks the job up

    worker = _run_burst_worker()

    assert worker.returncode == 0, worker.stderr
    assert queue.count == 0
    revenue = FactRecord.objects.get(fact_id="NVDA:revenue:FY2025")
    assert revenue.value == Decimal("130497000000")
    assert revenue.form == "10-K"
    assert revenue.url.startswith("https://www.sec.gov/")
    assert Company.objects.get(ticker="NVDA").cik == 1045810


def test_a_refresh_for_an_unknown_ticker_fails_the_job_and_stores_nothing(
    client: Client, admin_user: User, redis_url: str
) -> None:
    queue = django_rq.get_queue("default")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    bogus = Company.objects.create(ticker="ZZZZQ", name="Nobody")
    client.force_login(admin_user)
    client.post(
        reverse("admin:memos_company_changelist"),
        {"action": "refresh_facts", "_selected_action": [bogus.pk]},
    )

    failed = queue.failed_job_registry
    failed_before = set(failed.get_job_ids())

    worker = _run_burst_worker()

    assert worker.returncode == 0, worker.stderr
    # Only the refresh's own job: a burst worker also files as failed any job another test's killed worker
    # left in this Redis database's started registry (a CI run met one).
    new_failures = set(failed.get_job_ids()) - failed_before
    assert "refresh-facts-ZZZZQ" in new_failures
    job = queue.fetch_job("refresh-facts-ZZZZQ")
    result = job.latest_result() if job is not None else None
    assert result is not None and "unknown ticker 'ZZZZQ'" in (result.exc_string or "")
    assert not FactRecord.objects.exists()
    assert job is not None
    failed.remove(job.id, delete_job=True)
