"""The Django admin is the admin group's: runs are not started or steered there, evidence is read-only, and
django-rq's dashboard (job arguments, "empty queue", delete and requeue) is for superusers only."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import django_rq
import pytest
from django.contrib.auth.models import Permission, User
from django.db.models import Model
from django.test import Client
from rq import Queue
from rq.job import Job

from memos.models import DataLoad, FactRecord, LLMCall, Run, SourceDocument
from tests.memos.factories import company, ledger_row, revenue_fact, run_for

pytestmark = pytest.mark.django_db

RQ_ADMIN = "/admin/django_rq/dashboard/"


@pytest.fixture
def dora(db: None) -> User:
    """A staff member who is not a superuser, given every permission of the memos app: the worst case of
    an admin ticking too many boxes."""
    user = User.objects.create_user(username="dora", password="dora-secret-pass", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="memos"))
    return user


@pytest.fixture
def queued_job(redis_url: str) -> Iterator[Job]:
    queue = Queue("default", connection=django_rq.get_connection("default"))
    job = queue.enqueue("os.getpid", description="a job the dashboard could delete")
    yield job
    queue.remove(job.id)
    if Job.exists(job.id, connection=queue.connection):
        job.delete()


def test_an_analyst_cannot_open_the_admin_or_read_the_ledger_there(client: Client, alice: User) -> None:
    ledger_row(run_for(alice))
    client.force_login(alice)
    for url in ("/admin/", "/admin/memos/run/", "/admin/memos/llmcall/", "/admin/memos/run/add/"):
        page = client.get(url)
        assert page.status_code == 302 and page["Location"].startswith("/admin/login/"), url
    assert b"Admin</a>" not in client.get("/").content


def test_an_analyst_cannot_reach_the_rq_dashboard_or_its_json(client: Client, alice: User) -> None:
    client.force_login(alice)
    for url in (RQ_ADMIN, f"{RQ_ADMIN}stats.json/", f"{RQ_ADMIN}queues/0/"):
        assert client.get(url).status_code == 403, url  # signed in, not a superuser: refused
        assert b'"queues"' not in client.get(url).content


def test_a_staff_member_who_is_not_a_superuser_cannot_see_the_rq_dashboard(
    client: Client, dora: User, queued_job: Job
) -> None:
    client.force_login(dora)
    for url in (
        RQ_ADMIN,
        f"{RQ_ADMIN}stats.json/",
        f"{RQ_ADMIN}queues/0/",
        f"{RQ_ADMIN}queues/0/{queued_job.id}/",
    ):
        assert client.get(url).status_code == 403, url
    assert RQ_ADMIN.encode() not in client.get("/admin/").content


def test_a_staff_member_cannot_empty_the_queue_or_delete_or_requeue_a_job(
    client: Client, dora: User, queued_job: Job
) -> None:
    client.force_login(dora)
    for action in ("empty/", "requeue-all/", f"{queued_job.id}/delete/", f"{queued_job.id}/requeue/"):
        assert client.post(f"{RQ_ADMIN}queues/0/{action}").status_code == 403, action
    assert queued_job.id in Queue("default", connection=queued_job.connection).job_ids


def test_a_superuser_uses_the_rq_dashboard(client: Client, admin_user: User, queued_job: Job) -> None:
    client.force_login(admin_user)
    assert client.get(RQ_ADMIN).status_code == 200
    assert queued_job.id.encode() in client.get(f"{RQ_ADMIN}queues/0/").content
    assert client.post(f"{RQ_ADMIN}queues/0/{queued_job.id}/delete/").status_code == 302
    assert queued_job.id not in Queue("default", connection=queued_job.connection).job_ids


def test_nobody_adds_a_run_in_the_admin(client: Client, dora: User, admin_user: User, alice: User) -> None:
    brief_run = run_for(alice)
    for user in (dora, admin_user):
        client.force_login(user)
        assert client.get("/admin/memos/run/add/").status_code == 403
        posted = client.post(
            "/admin/memos/run/add/",
            {
                "brief": brief_run.brief_id,
                "created_by": alice.pk,
                "config": json.dumps({"iterations": 10000}),
            },
        )
        assert posted.status_code == 403
    assert Run.objects.count() == 1


def test_a_runs_config_creator_and_status_cannot_be_changed_in_the_admin(
    client: Client, admin_user: User, alice: User, charlie: User
) -> None:
    run = run_for(alice)
    before = Run.objects.filter(pk=run.pk).values().get()
    client.force_login(admin_user)
    page = client.get(f"/admin/memos/run/{run.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    # Whatever the page offers as inputs, sent back as they are, with the steering fields overridden.
    posted = {name: form.fields[name].prepare_value(form[name].value()) for name in form.fields}
    posted = {name: "" if value is None else value for name, value in posted.items()}
    posted |= {
        "status": Run.Status.DONE,
        "created_by": charlie.pk,
        "config": json.dumps({"iterations": 10000}),
        "budget_tokens": "99999999",
        "_save": "Save",
    }

    refused = client.post(f"/admin/memos/run/{run.pk}/change/", posted)

    assert refused.status_code == 403
    assert Run.objects.filter(pk=run.pk).values().get() == before


@pytest.mark.parametrize("model", [FactRecord, SourceDocument, DataLoad, LLMCall])
def test_evidence_is_read_only_in_the_admin(
    client: Client, admin_user: User, model: type[FactRecord | SourceDocument | DataLoad | LLMCall]
) -> None:
    apple = company()
    rows: dict[type[Model], Callable[[], Model]] = {
        FactRecord: lambda: revenue_fact(apple),
        SourceDocument: lambda: SourceDocument.objects.create(
            doc_id="news:1", kind=SourceDocument.Kind.NEWS, title="A headline", url="https://example.org/1"
        ),
        DataLoad: lambda: DataLoad.objects.create(data_version="c" * 64, source="data/snapshot"),
        LLMCall: lambda: ledger_row(run_for(admin_user, apple)),
    }
    row = rows[model]()
    base = f"/admin/memos/{model._meta.model_name}/"
    client.force_login(admin_user)

    listing = client.get(base)
    assert listing.status_code == 200
    assert b'value="delete_selected"' not in listing.content
    assert client.get(f"{base}add/").status_code == 403
    assert client.get(f"{base}{row.pk}/change/").status_code == 200  # a view-only page
    assert client.post(f"{base}{row.pk}/change/", {"_save": "Save"}).status_code == 403
    assert client.get(f"{base}{row.pk}/delete/").status_code == 403
    bulk = client.post(base, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert bulk.status_code == 200  # the list again: there is no such action to run
    assert model.objects.filter(pk=row.pk).exists()


def test_a_correction_is_a_new_load_queued_from_the_company_list(
    client: Client, admin_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    apple = company()
    client.force_login(admin_user)
    assert b'value="refresh_facts"' in client.get("/admin/memos/company/").content

    with django_capture_on_commit_callbacks() as callbacks:
        done = client.post(
            "/admin/memos/company/", {"action": "refresh_facts", "_selected_action": [apple.pk]}, follow=True
        )

    assert "Queued a refresh of SEC facts for AAPL" in done.content.decode()
    assert len(callbacks) == 1  # the enqueue, once the transaction commits
