"""Background jobs run by the RQ worker.

Jobs take plain values (a ticker, a run id), never model instances, so a job enqueued before a restart
still means the same thing after it. Each is idempotent: running it twice stores the same rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import django_rq
from django.db import transaction

from agents.data.edgar import load_company_facts
from memos.pipeline import driver
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.fact_store import save_company_facts
from memos.services import falsifier_hits
from memos.services.notifications import wait_for_mail

log = logging.getLogger(__name__)


def run_stage(run_id: str, stage: str) -> None:
    """A run from ``stage`` to its end, in this job (memos.pipeline.driver)."""
    try:
        driver.execute_stage(run_id, stage)
    finally:
        wait_for_mail()  # the work-horse exits right after the job: the notices of a frozen version go first


def refresh_company_facts(ticker: str) -> dict[str, object]:
    """Read a company's SEC figures from the configured source and upsert them as facts; a newer figure that
    meets a frozen memo's falsifier re-opens its position (memos.services.falsifier_hits)."""
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
