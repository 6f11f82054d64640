"""One reported value per (concept, unit, period), from either route (companyfacts or inline XBRL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

# (period start, period end); the start is None for an instant (a balance at the end date).
PeriodKey = tuple[date | None, date]
# Qualified concept -> period -> the value first reported for it.
ObservationTable = dict[str, dict[PeriodKey, "Observation"]]


@dataclass(frozen=True)
class Observation:
    concept: str
    unit: str
    start: date | None
    end: date
    value: Decimal
    form: str
    accession: str | None
    filed: date | None
    label: str = ""

    @property
    def key(self) -> PeriodKey:
        return (self.start, self.end)
