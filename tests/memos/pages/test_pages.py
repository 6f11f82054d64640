import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from memos.models import ArtefactVersion
from memos.services.accounts import Roles
from tests.memos.factories import company, ledger_row, revenue_fact, run_for
from tests.memos.review.support import frozen, member

pytestmark = pytest.mark.django_db


def test_a_visitor_sees_the_landing_page_and_a_login_link(client: Client) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert b"Log in" in page.content
    assert b"Fact store" not in page.content


def test_a_logged_in_analyst_sees_figures_linked_to_the_filing_that_reported_them(
    client: Client, alice: User
) -> None:
    revenue_fact(company())
    client.force_login(alice)
    page = client.get("/facts/").content.decode()
    assert "USD 391,035 M" in page
    assert "AAPL:revenue:FY2024" in page
    assert "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/" in page


def test_recent_runs_show_only_what_the_user_may_see(client: Client, alice: User, charlie: User) -> None:
    run_for(alice)
    client.force_login(charlie)
    assert b"Is the services mix durable?" not in client.get("/").content
    client.force_login(alice)
    assert b"Is the services mix durable?" in client.get("/").content


def test_the_admin_lists_companies_facts_documents_runs_and_the_ledger(
    client: Client, admin_user: User
) -> None:
    apple = company()
    fact = revenue_fact(apple)
    run = run_for(admin_user, apple)
    ledger_row(run)
    client.force_login(admin_user)
    for name in ("company", "factrecord", "sourcedocument", "brief", "run", "llmcall"):
        assert client.get(f"/admin/memos/{name}/").status_code == 200, name
    facts_page = client.get("/admin/memos/factrecord/").content.decode()
    assert "10-K 0000320193-24-000123" in facts_page
    assert fact.url in facts_page
    assert client.get("/admin/memos/llmcall/add/").status_code == 403


def test_the_login_page_refuses_a_wrong_password(client: Client, alice: User) -> None:
    page = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert b"do not match" in page.content


def test_an_executive_finds_what_was_published_on_the_home_page_and_nothing_else(
    client: Client, alice: User
) -> None:
    """The executives read published versions only; the home page lists them, newest first."""
    executive = member("eve", Roles.EXECUTIVE)
    published, draft = frozen(alice), frozen(alice, thesis="Not yet approved.")
    ArtefactVersion.objects.filter(pk=published.pk).update(status=ArtefactVersion.Status.APPROVED)
    ArtefactVersion.objects.filter(pk=published.pk).update(
        status=ArtefactVersion.Status.PUBLISHED, published_at=timezone.now()
    )
    client.force_login(executive)
    page = client.get("/").content.decode()
    assert 'id="published"' in page
    assert f'href="/versions/{published.pk}/"' in page and f'href="/versions/{draft.pk}/"' not in page
    assert "AAPL</strong> memo v1" in page
