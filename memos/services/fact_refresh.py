"""A company's data refreshed in the background: the admin queues the job, or in live mode the scheduler's
tick queues it daily for every watched company (``refresh_due``); the RQ worker runs it.

The job reads the SEC figures, then, in live mode, the daily prices (the quant figures computed again from
the live provider's bars against SPY's) and the news where a search API is configured (``SCREEN_SEARCH_URL``).
It takes a ticker, never a model instance, and is idempotent: running it twice stores the same rows. A
newer figure that meets a frozen memo's falsifier re-opens its position (memos.services.surfaces.new_facts).
What failed is kept on the company's row, part by part; the home page shows it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import django_rq
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.data.edgar import load_company_facts
from agents.data.errors import DataError
from agents.data.prices import STOOQ_URL
from agents.data.types import Citation
from agents.quant.facts import quant_facts
from agents.quant.profile import compute_profile
from memos.models import Company
from memos.pipeline import driver
from memos.pipeline.data_sources import edgar_source, live_price_source, live_search
from memos.pipeline.fact_store import save_company_facts, save_documents, save_facts
from memos.services.queued import enqueue_once, job_to_queue
from memos.services.snapshot import BENCHMARK
from memos.services.surfaces import new_facts_of

STOOQ_NAME = "Stooq"


def refresh_company_facts(ticker: str) -> dict[str, object]:
    """Read a company's SEC figures from the configured source and upsert them as facts, then (live mode)
    its prices and news; the company's row says when that last succeeded, or what failed in the last attempt
    (the home page shows both). A failure of the SEC figures fails the job; one of the prices or the news is
    recorded and the rest stands."""
    try:
        fact_set = load_company_facts(edgar_source(), ticker)
        saved = save_company_facts(fact_set)
    except DataError as exc:
        Company.objects.filter(ticker=ticker.upper()).update(
            refresh_failed_at=timezone.now(), refresh_error=f"SEC figures: {exc}"[:500]
        )
        raise
    outcome: dict[str, object] = {"ticker": fact_set.ticker, "entity": fact_set.entity, "facts": saved}
    problems: list[str] = []
    if settings.DATA_MODE == "live":
        for part, refresh in (("prices", refresh_prices), ("news", refresh_news)):
            try:
                outcome[part] = refresh(fact_set.ticker)
            except DataError as exc:
                problems.append(f"{part}: {exc}")
    now = timezone.now()
    Company.objects.filter(ticker=fact_set.ticker).update(
        facts_refreshed_at=now,
        refresh_error="; ".join(problems)[:500],
        **({"refresh_failed_at": now} if problems else {}),
    )
    new_facts_of(fact_set.ticker)  # a memo's falsifiers are checked against them, once this commits
    return outcome


def refresh_prices(ticker: str) -> int:
    """The live provider's daily bars for ``ticker`` and the benchmark, and the quant figures computed from
    them (beta, volatility, returns ...), upserted as facts cited to the provider's URL. Returns the count."""
    prices = live_price_source()
    series = prices.series(ticker)
    profile = compute_profile(series, benchmark=prices.series(BENCHMARK))
    citation = Citation(
        source="prices", url=STOOQ_URL.format(symbol=ticker.lower()), label=f"daily bars from {STOOQ_NAME}"
    )
    company = Company.objects.get(ticker=ticker)
    return save_facts(company=company, facts=quant_facts(profile, ticker=ticker, citation=citation))


def refresh_news(ticker: str) -> int:
    """The configured news search's latest items on the company (none when no search is configured),
    normalised and stored as untrusted documents. Returns how many were stored."""
    search = live_search()
    if search is None:
        return 0
    company = Company.objects.get(ticker=ticker)
    query = f"{company.name} {ticker}" if company.name else ticker
    return save_documents(search.search(query, tickers=(ticker,)))


def refresh_due(*, now: datetime, enqueue: bool = True) -> list[str]:
    """Live mode's daily refresh (``DATA_REFRESH_HOURS``, 24): the watched companies (those a brief is about)
    whose figures were last refreshed longer ago than that, or never, are queued; one whose last attempt
    failed waits an hour before the next. Nothing in snapshot mode. Returns the tickers queued."""
    if settings.DATA_MODE != "live":
        return []
    stale = now - timedelta(hours=settings.DATA_REFRESH_HOURS)
    failed_lately = now - timedelta(hours=1)
    due = (
        Company.objects.filter(briefs__isnull=False)
        .filter(Q(facts_refreshed_at__isnull=True) | Q(facts_refreshed_at__lt=stale))
        .exclude(refresh_failed_at__gt=failed_lately)
        .values_list("ticker", flat=True)
        .distinct()
    )
    tickers = sorted(due)
    return enqueue_fact_refresh(tickers, scheduled=True) if enqueue else tickers


def refresh_job_id(ticker: str) -> str:
    """One job id per company: a refresh still queued or running is never queued a second time."""
    return f"refresh-facts-{ticker}"


def enqueue_fact_refresh(tickers: Iterable[str], *, scheduled: bool = False) -> list[str]:
    """Queue one refresh per ticker once the surrounding transaction commits, but for a ticker whose refresh
    is still queued or running (a slow SEC, a busy worker: the next tick would stack another); returns the
    tickers queued. ``scheduled``: the scheduler's daily refresh, the desk's own work, queued behind every
    person's run for the workers kept for it (memos.pipeline.driver); an admin's refresh is a person's."""
    queue = django_rq.get_queue(driver.queue_for(scheduled))
    wanted = sorted({ticker.strip().upper() for ticker in tickers if ticker.strip()})
    queued = [
        ticker
        for ticker in wanted
        if job_to_queue(queue, refresh_job_id(ticker), again_after_running=False) is not None
    ]

    def enqueue() -> None:
        for ticker in queued:
            enqueue_once(
                queue,
                refresh_job_id(ticker),
                refresh_company_facts,
                ticker,
                description=f"refresh SEC facts for {ticker}",
            )

    transaction.on_commit(enqueue)
    return queued
