"""A metric's latest figure in the fact store, as the memo's falsifiers read it: the synthesis binds each
falsifier to a metric (agents.memo.falsifiers), the memo stage shows its reading now, and freezing the memo
watches it (memos.services.falsifiers)."""

from __future__ import annotations

from collections.abc import Iterable

from agents.memo.falsifiers import Reading
from memos.models import Company, FactRecord


def reading(fact: FactRecord) -> Reading:
    return Reading(
        fact_id=fact.fact_id,
        value=fact.value,
        period_end=fact.period_end,
        fiscal_period=fact.fiscal_period,
        unit=fact.unit,
    )


def latest_reading(company: Company, metric: str) -> Reading | None:
    """The metric's latest fact for the company (the newest period; an annual figure before a quarter or a
    session ending the same day), or None when the fact store holds none."""
    fact = (
        FactRecord.objects.filter(company=company, metric=metric)
        .order_by("-period_end", "fiscal_period", "fact_id")
        .first()
    )
    return reading(fact) if fact is not None else None


def latest_readings(company: Company, metrics: Iterable[str]) -> dict[str, Reading | None]:
    return {metric: latest_reading(company, metric) for metric in sorted(set(metrics))}
