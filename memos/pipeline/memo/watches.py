"""The positions register, as a memo is frozen: its bound falsifiers become watches with a reference fact read
by code, and the older watches of the brief's memo line close.

``open_watches`` is the memo workflow's freeze hook (``Workflow.on_frozen``): freezing
(memos.services.versions.freeze) calls it inside the transaction that freezes the version. What happens when
newer data meets a watch's condition is memos.pipeline.memo.desk.falsifier_hits (kept apart: it starts runs).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import TypeAdapter, ValidationError

from agents.memo.falsifiers import Reading, problem
from agents.memo.schemas import FalsifierBinding
from memos.models import ArtefactVersion, Company, FactRecord, FalsifierWatch
from memos.models.falsifiers import MAX_FALSIFIER_TEXT

log = logging.getLogger(__name__)

_BINDINGS = TypeAdapter(list[FalsifierBinding])


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


def open_watches(version: ArtefactVersion) -> None:
    """Close the older watches of the brief's memo line, then watch each falsifier the frozen memo binds, its
    reference the metric's latest fact now. Call inside the freezing transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("open_watches() must run inside the transaction that freezes the version")
    if version.number > 1:  # a first version has no older watches to close
        FalsifierWatch.objects.filter(
            brief_id=version.brief_id,
            status=FalsifierWatch.Status.WATCHING,
            version__kind=version.kind,
            version__number__lt=version.number,
        ).update(status=FalsifierWatch.Status.CLOSED, closed_at=timezone.now())
    falsifiers, bindings = _bound(version.content)
    company = version.brief.company
    if company is None:  # a memo is about a company; a watchlist's brief has no metric to watch
        return
    watches = []
    for binding in bindings:
        baseline = latest_reading(company, binding.metric)
        # The memo stage kept only bindings that pass these checks; data may have loaded since.
        why = problem(binding, len(falsifiers), baseline)
        if why or baseline is None:
            log.info("%s: falsifier %s not watched: %s", version, binding.falsifier, why)
            continue
        watches.append(
            FalsifierWatch(
                version=version,
                brief_id=version.brief_id,
                company=company,
                number=binding.falsifier,
                text=falsifiers[binding.falsifier - 1][:MAX_FALSIFIER_TEXT],
                metric=binding.metric,
                condition=binding.condition,
                baseline_fact_id=baseline.fact_id,
                baseline_value=baseline.value,
                baseline_period_end=baseline.period_end,
                baseline_fiscal_period=baseline.fiscal_period,
                unit=baseline.unit,
            )
        )
    # The unique constraint (one watch per falsifier of a version) makes a repeated call a no-op.
    FalsifierWatch.objects.bulk_create(watches, ignore_conflicts=True)


def _bound(content: dict[str, Any]) -> tuple[list[str], list[FalsifierBinding]]:
    """The frozen memo's falsifiers and the bindings the memo stage kept (none in a memo frozen before the
    register existed, or in content that does not read as one)."""
    memo = content.get("memo")
    falsifiers = memo.get("falsifiers") if isinstance(memo, dict) else None
    if not isinstance(falsifiers, list):
        return [], []
    try:
        bindings = _BINDINGS.validate_python(content.get("falsifier_bindings", []))
    except ValidationError:
        return [], []
    return [str(text) for text in falsifiers], bindings
