"""A company's SEC figures refreshed in the background: the admin queues the job, the RQ worker runs it.

The job takes a ticker, never a model instance, and is idempotent: running it twice stores the same rows. A
newer figure that meets a frozen memo's falsifier re-opens its position (memos.services.falsifier_hits).
"""

from __future__ import annotations

from collections.abc import Iterable

import django_rq
from django.db import transaction

from agents.data.edgar import load_company_facts
from memos.pipeline import driver
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.fact_store import save_company_facts
from memos.services import falsifier_hits


def refresh_company_facts(ticker: str) -> dict[str, object]:
    """Read a company's SEC figures from the configured source and upsert them as facts."""
    fact_set = load_company_facts(edgar_source(), ticker)
    saved = save_company_facts(fact_set)
    falsifier_hits.check_ticker_after_commit(fact_set.ticker)
    return {"ticker": fact_set.ticker, "entity": fact_set.entity, "facts": saved}


def enqueue_fact_refresh(tickers: Iterable[str]) -> list[str]:
    """Queue one refresh per ticker once the surrounding transaction commits; returns the tickers queued."""
    queued = sorted({ticker.strip().upper() for ticker in tickers if ticker.strip()})
    queue = django_rq.get_queue(driver.QUEUE)

    def enqueue() -> None:
        for ticker in queued:
            queue.enqueue(refresh_company_facts, ticker, description=f"refresh SEC facts for {ticker}")

    transaction.on_commit(enqueue)
    return queued
