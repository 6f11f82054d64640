"""Every page reads a constant number of rows whatever the number of companies, runs and steps: the home
page, the fact store, a run's page and its step documents, each the first time (nothing cached) and again
(from the cache)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import connection, reset_queries, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memos.models import AgentStep, Company, FactRecord, Run, SourceDocument
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.factories import company, evaluation_output, revenue_fact, run_for
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

FRAGMENT = {"X-Desk-Fragment": "1"}
# Session, user, the reader's roles (read once on the home page, a read per question on the others) and the
# page's own few (the home page: the analyst's active and finished runs, schedules, what was published); the
# fact store's page reads six more for its company rows when they are not in the cache.
MOST_QUERIES = 13


def queries(client: Client, path: str, headers: dict[str, str] | None = None) -> list[str]:
    """The SQL one GET of ``path`` ran."""
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, headers=headers)
    assert response.status_code == 200, response.status_code
    return [query["sql"] for query in captured.captured_queries]


def first_and_again(client: Client, path: str, headers: dict[str, str] | None = None) -> tuple[int, int]:
    """Queries of a first visit, which draws the page, and of a second, which finds its pieces cached."""
    first = queries(client, path, headers)
    again = queries(client, path, headers)
    assert len(first) <= MOST_QUERIES, "\n".join(first)
    assert len(again) < len(first), "\n".join(again)
    return len(first), len(again)


def companies(count: int, start: int = 0) -> None:
    """``count`` companies, each with three years of headline figures and a news item naming it."""
    for number in range(start, start + count):
        ticker = f"T{number:03d}"
        of = company(ticker, f"Company {number}", cik=900_000 + number)
        for year in (2022, 2023, 2024):
            revenue_fact(of, year=year, value=str(1_000_000 * (number + 1)))
            FactRecord.objects.create(
                fact_id=f"{ticker}:net_income:FY{year}",
                company=of,
                metric="net_income",
                value=Decimal(10_000 * (number + 1)),
                unit="USD",
                period_end=date(year, 9, 28),
                fiscal_year=year,
                fiscal_period="FY",
                source=FactRecord.Source.COMPANYFACTS,
                url="https://www.sec.gov/",
            )
        SourceDocument.objects.create(
            doc_id=f"news:{number:012x}",
            kind="news",
            title=f"{ticker} reports",
            url="https://example.org/",
            source="Wire",
            tickers=[ticker],
        )


def runs(owner: User, count: int, *, steps: int = 2) -> list[Run]:
    """``count`` finished runs of the first company, each with ``steps`` done steps and an evaluation."""
    made = []
    of = Company.objects.order_by("ticker").first()
    for _ in range(count):
        run = run_for(owner, of, status=Run.Status.DONE)
        Run.objects.filter(pk=run.pk).update(finished_at=timezone.now(), lease=3)
        made.append(run)
        now = timezone.now()
        AgentStep.objects.bulk_create(
            AgentStep(
                run=run,
                stage="specialists",
                key=f"specialist-{n}",
                kind="specialist",
                position=n,
                title=f"Specialist {n}",
                status=AgentStep.Status.DONE,
                summary=f"{n} claims",
                started_at=now - timedelta(seconds=5),
                finished_at=now,
            )
            for n in range(steps)
        )
        AgentStep.objects.create(
            run=run,
            stage="evaluation",
            key="evaluation",
            kind="evaluation",
            title="Evaluator's report",
            status=AgentStep.Status.DONE,
            output=evaluation_output(
                same_model_warning="The evaluator uses the synthesizer's model"
            ).model_dump(mode="json"),
            started_at=now,
            finished_at=now,
        )
    return made


@pytest.mark.django_db
def test_the_home_page_reads_as_many_rows_for_twelve_runs_as_for_two(client: Client, alice: User) -> None:
    companies(2)
    runs(alice, 2)
    client.force_login(alice)
    few = queries(client, "/")

    companies(10, start=2)
    runs(alice, 10)
    many = queries(client, "/")
    assert len(few) <= MOST_QUERIES, "\n".join(few)
    assert len(many) == len(few), "\n".join(many)
    # The reader's roles are read once and handed to each question the page asks of them.
    assert sum('"auth_group"' in query for query in few) == 1, "\n".join(few)
    # The ten newest finished runs (none is active).
    assert client.get("/").content.decode().count('class="run-question"') == 10


@pytest.mark.django_db
def test_the_fact_store_reads_as_many_rows_for_twelve_companies_as_for_two(
    client: Client, alice: User
) -> None:
    companies(2)
    client.force_login(alice)
    few = first_and_again(client, "/facts/")

    companies(10, start=2)
    many = first_and_again(client, "/facts/")
    assert many == few

    page = client.get("/facts/").content.decode()
    assert page.count('class="ticker"') >= 12 and "T011" in page and "1 news item" in page
    # Each filter is its own page, drawn once and then read from the cache in as few queries.
    assert first_and_again(client, "/facts/?statements=1&documents=1") == few


@pytest.mark.django_db
def test_a_run_page_reads_as_many_rows_for_twelve_steps_as_for_two(client: Client, alice: User) -> None:
    companies(1)
    small, large = runs(alice, 1, steps=2)[0], runs(alice, 1, steps=12)[0]
    client.force_login(alice)
    assert first_and_again(client, f"/runs/{small.pk}/") == first_and_again(client, f"/runs/{large.pk}/")

    # A run that is still going is read afresh on every visit, in as few queries.
    Run.objects.filter(pk__in=[small.pk, large.pk]).update(status=Run.Status.RUNNING)
    assert len(queries(client, f"/runs/{small.pk}/")) == len(queries(client, f"/runs/{large.pk}/"))


@pytest.mark.django_db
def test_a_step_document_reads_as_many_rows_in_a_run_of_twelve_steps_as_of_two(
    client: Client, alice: User
) -> None:
    companies(1)
    small, large = runs(alice, 1, steps=2)[0], runs(alice, 1, steps=12)[0]
    client.force_login(alice)
    counts = []
    for run in (small, large):
        step = run.steps.get(key="evaluation")
        path = f"/runs/{run.pk}/steps/{step.pk}/"
        first, again = first_and_again(client, path)
        counts.append((first, again, len(queries(client, path, FRAGMENT))))
    assert counts[0] == counts[1]
    assert counts[0][2] == counts[0][1]  # the drawer's fragment reads what the page does


@pytest.mark.django_db(transaction=True)
def test_the_memo_of_a_full_run_reads_as_many_rows_as_the_memo_of_a_quick_one(client: Client) -> None:
    """A full run's memo cites more facts, from more specialists' evidence: still the same few queries. Every
    other document of the run is cached on its first visit too (its context survives the cache)."""
    load_desk_data("AAPL")
    user = analyst("ana")
    client.force_login(user)
    memo_counts = []
    for profile in ("quick", "full"):
        brief = create_brief(owner=user, ticker="AAPL", question=f"Is the {profile} margin story durable?")
        run = start_run(brief=brief, user=user, profile=profile, enqueue=False, workflow="memo")
        with fake_llm(script_for(run)):
            driver.run_inline(str(run.pk))
        for step in AgentStep.objects.filter(run=run, status=AgentStep.Status.DONE):
            # The document's own reads: inside a transaction no page is kept whole (memos.views.kept_pages),
            # whose second visit would read three rows, or draw again if anything anywhere committed.
            with transaction.atomic():
                counts = first_and_again(client, f"/runs/{run.pk}/steps/{step.pk}/")
            if step.key == "memo":
                memo_counts.append(counts)
    assert len(memo_counts) == 2 and memo_counts[0] == memo_counts[1]
