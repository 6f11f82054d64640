"""A company's SEC figures refreshed in the background: the admin queues the job, or in live mode the
scheduler's tick queues it daily for every watched company (``refresh_due``); the RQ worker runs it.

The job takes a ticker, never a model instance, and is idempotent: running it twice stores the same rows. A
newer figure that meets a frozen memo's falsifier re-opens its position (memos.services.falsifier_hits).
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
from memos.models import Company
from memos.pipeline import driver
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.fact_store import save_company_facts
from memos.services import falsifier_hits


def refresh_company_facts(ticker: str) -> dict[str, object]:
    """Read a company's SEC figures from the configured source and upsert them as facts; the company's row
    says when that last succeeded, or why the last attempt failed (the home page shows both)."""
    try:
        fact_set = load_company_facts(edgar_source(), ticker)
        saved = save_company_facts(fact_set)
    except DataError as exc:
        Company.objects.filter(ticker=ticker.upper()).update(
            refresh_failed_at=timezone.now(), refresh_error=str(exc)[:500]
        )
        raise
    Company.objects.filter(ticker=fact_set.ticker).update(facts_refreshed_at=timezone.now(), refresh_error="")
    falsifier_hits.check_ticker_after_commit(fact_set.ticker)
    return {"ticker": fact_set.ticker, "entity": fact_set.entity, "facts": saved}


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
    return enqueue_fact_refresh(tickers) if enqueue else tickers


def enqueue_fact_refresh(tickers: Iterable[str]) -> list[str]:
    """Queue one refresh per ticker once the surrounding transaction commits; returns the tickers queued."""
    queued = sorted({ticker.strip().upper() for ticker in tickers if ticker.strip()})
    queue = django_rq.get_queue(driver.QUEUE)

    def enqueue() -> None:
        for ticker in queued:
            queue.enqueue(refresh_company_facts, ticker, description=f"refresh SEC facts for {ticker}")

    transaction.on_commit(enqueue)
    return queued
