"""Pages kept drawn per reader while nothing is committed (memos.views.kept_pages): the home page, a run's
page and a step's document answer a reader's second visit from the shared cache, in the session's, the user's
and one more query; any commit draws them afresh; no reader is ever given another's page; and a kept page's
forms carry the token of the request that reads it.

Transactional on purpose: inside a test's transaction nothing is kept (``committed_state`` is None), which
the last test proves too. PostgreSQL's snapshot names every commit of the cluster, another test database's
too (another xdist worker's): the tests of a second visit hold the name still between their own requests
(``steady``), still asking the database for it."""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memos.cache import committed_state
from memos.models import AgentStep, Run
from memos.views import kept_pages
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db(transaction=True)

# The session, the reader's row, and the database's state.
KEPT_QUERIES = 3
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]*)"')


def signed_in(user: User, *, enforce_csrf_checks: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf_checks)
    client.force_login(user)
    return client


def asked(client: Client, path: str, **headers: str) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, headers=headers)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode(), [query["sql"] for query in queries.captured_queries]


def without_tokens(page: str) -> str:
    return TOKEN.sub("", page)


@pytest.fixture
def steady(monkeypatch: pytest.MonkeyPatch) -> None:
    """The database's state as the kept pages see it does not move between this test's requests, whatever
    other databases of the cluster commit; still read (one query), and still None inside a transaction."""
    real, name = committed_state, f"steady {uuid.uuid4()}"  # this test's own
    monkeypatch.setattr(kept_pages, "committed_state", lambda: real() and name)


@pytest.fixture
def finished_run(alice: User) -> Run:
    run = run_for(alice, status=Run.Status.DONE)
    AgentStep.objects.create(
        run=run,
        stage="memo",
        key="memo",
        kind="memo",
        title="Investment memo",
        status=AgentStep.Status.DONE,
        summary="a memo of its own",
    )
    return run


@pytest.mark.usefixtures("steady")
def test_a_second_visit_is_answered_from_what_was_drawn(alice: User, finished_run: Run) -> None:
    reader = signed_in(alice)
    step = finished_run.steps.get()
    for path, headers in (
        ("/", {}),
        (f"/runs/{finished_run.pk}/", {}),
        (f"/runs/{finished_run.pk}/steps/{step.pk}/", {}),
        (f"/runs/{finished_run.pk}/steps/{step.pk}/", {"X-Desk-Fragment": "1"}),
    ):
        first, drawing = asked(reader, path, **headers)
        again, kept = asked(reader, path, **headers)
        assert len(drawing) > KEPT_QUERIES, path
        assert len(kept) == KEPT_QUERIES, (path, kept)
        assert without_tokens(again) == without_tokens(first), path
    # The drawer's fragment and the document's page are kept apart (the view varies on the header).
    page, _ = asked(reader, f"/runs/{finished_run.pk}/steps/{step.pk}/")
    fragment, _ = asked(reader, f"/runs/{finished_run.pk}/steps/{step.pk}/", **{"X-Desk-Fragment": "1"})
    assert "<html" in page and "<html" not in fragment


def test_any_commit_draws_the_page_afresh(alice: User, finished_run: Run) -> None:
    reader = signed_in(alice)
    home, _ = asked(reader, "/")
    assert "Is the services mix durable?" in home and "a fresh question" not in home

    other = run_for(alice, finished_run.brief.company, status=Run.Status.DONE)
    other.brief.question = "a fresh question"
    other.brief.save()
    home, queries = asked(reader, "/")
    assert "a fresh question" in home
    assert len(queries) > KEPT_QUERIES

    run_page, _ = asked(reader, f"/runs/{finished_run.pk}/")
    Run.objects.filter(pk=finished_run.pk).update(status=Run.Status.FAILED)
    assert 'data-status="failed"' in asked(reader, f"/runs/{finished_run.pk}/")[0]
    assert 'data-status="failed"' not in run_page


@pytest.mark.usefixtures("steady")
def test_no_reader_is_given_another_readers_page(alice: User, charlie: User, finished_run: Run) -> None:
    reader, stranger = signed_in(alice), signed_in(charlie)
    asked(reader, f"/runs/{finished_run.pk}/")
    alices_home, _ = asked(reader, "/")

    # Charlie (no role on the desk) may not see an analyst's run: a 404, every time.
    for _ in range(2):
        assert stranger.get(f"/runs/{finished_run.pk}/").status_code == 404
    charlies_home, _ = asked(stranger, "/")
    assert 'id="your-runs"' in alices_home and 'id="your-runs"' not in charlies_home
    assert "alice" in alices_home and "alice" not in charlies_home


@pytest.mark.usefixtures("steady")
def test_a_kept_page_carries_the_token_of_the_request_reading_it(alice: User, finished_run: Run) -> None:
    first, second = signed_in(alice, enforce_csrf_checks=True), signed_in(alice, enforce_csrf_checks=True)
    drawn, _ = asked(first, "/")
    # Another browser of the same analyst: the page comes from the cache, its forms with its own token.
    kept, queries = asked(second, "/")
    assert len(queries) == KEPT_QUERIES
    tokens = TOKEN.findall(kept)
    assert tokens and all(tokens) and set(tokens).isdisjoint(TOKEN.findall(drawn))
    # The token works: the page's log-out form is accepted (a forged one is refused).
    assert second.post("/accounts/logout/", {"csrfmiddlewaretoken": "x" * 64}).status_code == 403
    assert second.post("/accounts/logout/", {"csrfmiddlewaretoken": tokens[0]}).status_code == 302


def test_a_commit_names_a_new_state(alice: User, finished_run: Run) -> None:
    before = committed_state()
    Run.objects.filter(pk=finished_run.pk).update(status=Run.Status.FAILED)
    after = committed_state()
    assert before is not None and after is not None and after != before
    assert after.startswith(f"{connection.settings_dict['NAME']}/")  # a recreated database never meets it


@pytest.mark.usefixtures("steady")
def test_nothing_is_kept_inside_a_transaction(alice: User, finished_run: Run) -> None:
    reader = signed_in(alice)
    with transaction.atomic():
        assert committed_state() is None
        asked(reader, f"/runs/{finished_run.pk}/")
        Run.objects.filter(pk=finished_run.pk).update(status=Run.Status.FAILED)
        # Its own write is not yet committed, and the snapshot does not name it: drawn again, it shows.
        page, queries = asked(reader, f"/runs/{finished_run.pk}/")
        assert 'data-status="failed"' in page and len(queries) > KEPT_QUERIES
