"""T5 against the fact store: a rendered deck's figures checked against ``FactRecord`` rows."""

from __future__ import annotations

from collections.abc import Collection

from agents.deck.factcheck.check import FactCheckReport, KnownFact, check
from memos.models import FactRecord
from memos.pipeline.evidence import fact_period


def fact_lookup(ids: Collection[str]) -> dict[str, KnownFact]:
    """The facts among ``ids`` the store holds, with their periods labelled as the desk labels them
    ("FY2024", "FY2025Q3", "as of 2026-10-30"); an id it does not hold is simply absent. One query."""
    rows = FactRecord.objects.filter(fact_id__in=list(ids))
    return {row.fact_id: KnownFact(value=row.value, unit=row.unit, period=fact_period(row)) for row in rows}


def check_file(data: bytes) -> FactCheckReport:
    """The fact-check of a rendered PPTX or PDF. Raises ``NoEmbeddedDeck`` or ``UnreadableFile`` (both
    ``ValueError``) for a file that is not a readable rendered deck."""
    return check(data, fact_lookup)
