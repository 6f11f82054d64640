"""The parsed result for one company, and the step that turns reported values into cited Facts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import date

from pydantic import BaseModel, ConfigDict

from agents.data.edgar.metrics import METRICS
from agents.data.edgar.observations import Observation, ObservationTable
from agents.data.types import Citation, Fact, FiscalPeriod, period_label


class FiscalYear(BaseModel):
    """One fiscal year's annual and derived facts, keyed by metric name."""

    model_config = ConfigDict(frozen=True)

    fiscal_year: int
    period_start: date
    period_end: date
    metrics: dict[str, Fact]


class CompanyFactSet(BaseModel):
    """Every fact read for one company: annual (``FY``), quarterly (``Q1``..``Q4``) and derived."""

    model_config = ConfigDict(frozen=True)

    ticker: str
    cik: int
    entity: str
    taxonomy: str
    facts: tuple[Fact, ...]

    def fiscal_years(self) -> list[FiscalYear]:
        """Fiscal years with at least one duration figure (which pins the year's start), newest last."""
        by_year: dict[int, dict[str, Fact]] = defaultdict(dict)
        for fact in self.facts:
            if fact.fiscal_period == "FY" and fact.fiscal_year is not None:
                by_year[fact.fiscal_year][fact.metric] = fact
        years: list[FiscalYear] = []
        for year, metrics in sorted(by_year.items()):
            starts = [fact.period_start for fact in metrics.values() if fact.period_start is not None]
            if starts:
                end = max(fact.period_end for fact in metrics.values())
                years.append(
                    FiscalYear(fiscal_year=year, period_start=min(starts), period_end=end, metrics=metrics)
                )
        return years

    def facts_by_id(self) -> dict[str, Fact]:
        return {fact.fact_id: fact for fact in self.facts}


def fact_id(ticker: str, metric: str, fiscal_year: int, fiscal_period: FiscalPeriod) -> str:
    return f"{ticker}:{metric}:{period_label(fiscal_year, fiscal_period)}"


def period_facts(
    *,
    ticker: str,
    taxonomy: str,
    table: ObservationTable,
    start: date,
    end: date,
    fiscal_year: int,
    fiscal_period: FiscalPeriod,
    cite: Callable[[Observation], Citation],
) -> list[Fact]:
    """One fact per metric the filer reported for the period: flows over start..end, balances at end.

    ``table`` must hold, per concept, only values in that metric's unit.
    """
    facts: list[Fact] = []
    for metric in METRICS:
        key = (start, end) if metric.kind == "duration" else (None, end)
        for concept in metric.concepts(taxonomy):
            observation = table.get(concept, {}).get(key)
            if observation is None:
                continue
            facts.append(
                Fact(
                    fact_id=fact_id(ticker, metric.name, fiscal_year, fiscal_period),
                    ticker=ticker,
                    metric=metric.name,
                    value=observation.value,
                    unit=observation.unit,
                    period_start=observation.start,
                    period_end=observation.end,
                    fiscal_year=fiscal_year,
                    fiscal_period=fiscal_period,
                    citation=cite(observation),
                )
            )
            break
    return facts
