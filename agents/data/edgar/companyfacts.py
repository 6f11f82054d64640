"""SEC companyfacts JSON (``data.sec.gov/api/xbrl/companyfacts``) into cited annual and quarterly Facts.

What the payload really looks like, and what we do about it:

* Every period is re-reported by later filings (a 10-K repeats two prior years, each 10-Q the prior-year
  quarter). Rows are deduplicated on (concept, unit, start, end) and the row from the filing that
  **first** reported the period is kept: earliest ``filed``, then lowest accession. The fact cites that
  original 10-K/10-Q/20-F, never a later comparative.
* The kept value is that original filing's value. Later filings sometimes differ: rounding (Tesla's FY2018
  ``Revenues`` is 21,461,268,000 in the FY2018 10-K and 21,461,000,000 when re-reported in millions) or a
  restatement (Apple's FY2009 restated revenue). We report what was first filed, deterministically.
* companyfacts holds XBRL filings only (from 2009), so a year reported before then cites the first XBRL
  filing that repeated it (Apple's FY2007 cites its FY2009 10-K), still the earliest filing SEC has.
* Only periodic reports count (10-K, 10-Q, 20-F, 40-F and their amendments and transition reports); 8-K
  earnings exhibits and registration statements are not the filing of record.
* Periods are labelled by their dates (see ``periods``), not by the rows' ``fy``/``fp``.
* us-gaap is read when present, else ifrs-full (20-F filers such as TSMC: annual only, in the reporting
  currency, i.e. the currency most of their monetary values are tagged in: TWD, not the USD convenience
  translation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from agents.data.edgar.citations import filing_index_url
from agents.data.edgar.derived import annual_derived_facts, quarterly_derived_facts
from agents.data.edgar.factset import CompanyFactSet, period_facts
from agents.data.edgar.metrics import METRICS, TAXONOMIES, US_GAAP, Metric
from agents.data.edgar.observations import Observation, ObservationTable, PeriodKey
from agents.data.edgar.periods import QUARTER_PERIODS, FiscalCalendar, Period, build_calendar
from agents.data.edgar.sources import read_json_file
from agents.data.errors import MalformedData, UnsupportedFiler
from agents.data.types import Citation, Fact, FiscalPeriod

PERIODIC_FORMS = frozenset(
    {
        "10-K",
        "10-K/A",
        "10-KT",
        "10-KT/A",
        "10-Q",
        "10-Q/A",
        "10-QT",
        "10-QT/A",
        "20-F",
        "20-F/A",
        "40-F",
        "40-F/A",
    }
)
LABEL_MAX_CHARS = 300  # the fact store's label column


def read_companyfacts_file(path: Path) -> dict[str, Any]:
    """A companyfacts ``.json`` or ``.json.gz`` file, checked for the companyfacts shape."""
    payload = read_json_file(path)
    if not isinstance(payload, dict):
        raise MalformedData(f"{path} is not companyfacts JSON (expected an object)")
    _header(payload, what=str(path))
    return payload


def facts_from_companyfacts(payload: Mapping[str, Any], *, ticker: str | None = None) -> CompanyFactSet:
    """Annual, quarterly and derived facts from one companyfacts payload.

    ``ticker`` names the facts (``AAPL:revenue:FY2024``); without it they are named by CIK
    (``CIK0000320193:revenue:FY2024``), since companyfacts itself carries no ticker.
    """
    cik, entity, taxonomies = _header(payload, what="the companyfacts payload")
    name = ticker.strip().upper() if ticker else f"CIK{cik:010d}"
    taxonomy = next((t for t in TAXONOMIES if isinstance(taxonomies.get(t), Mapping) and taxonomies[t]), None)
    if taxonomy is None:
        raise UnsupportedFiler(
            f"{entity} (CIK {cik}) reports neither us-gaap nor ifrs-full facts "
            f"(taxonomies: {', '.join(sorted(taxonomies)) or 'none'})"
        )
    concepts: Mapping[str, Any] = taxonomies[taxonomy]
    currency = _reporting_currency(concepts, taxonomy, entity)
    table = _observations(concepts, taxonomy, currency)
    calendar = build_calendar(_period_support(table), entity=entity, quarters=taxonomy == US_GAAP)

    def cite(observation: Observation) -> Citation:
        accession = observation.accession or ""
        return Citation(
            source="sec-companyfacts",
            url=filing_index_url(cik, accession),
            form=observation.form,
            accession=accession,
            filed=observation.filed,
            concept=observation.concept,
            label=observation.label,
        )

    return CompanyFactSet(
        ticker=name,
        cik=cik,
        entity=entity,
        taxonomy=taxonomy,
        facts=tuple(_facts(name, taxonomy, table, calendar, cite)),
    )


def _facts(
    ticker: str,
    taxonomy: str,
    table: ObservationTable,
    calendar: FiscalCalendar,
    cite: Callable[[Observation], Citation],
) -> list[Fact]:
    def facts_of(period: Period, year: int, fiscal_period: FiscalPeriod) -> list[Fact]:
        return period_facts(
            ticker=ticker,
            taxonomy=taxonomy,
            table=table,
            start=period.start,
            end=period.end,
            fiscal_year=year,
            fiscal_period=fiscal_period,
            cite=cite,
        )

    annual: dict[int, dict[str, Fact]] = {}
    for year, period in calendar.years.items():
        if found := facts_of(period, year, "FY"):
            annual[year] = {fact.metric: fact for fact in found}
    facts = [fact for metrics in annual.values() for fact in metrics.values()]
    facts.extend(annual_derived_facts(annual))
    quarters: dict[tuple[int, str], dict[str, Fact]] = {}
    for (year, number), period in calendar.quarters.items():
        if found := facts_of(period, year, QUARTER_PERIODS[number]):
            facts.extend(found)
            quarters[(year, QUARTER_PERIODS[number])] = {fact.metric: fact for fact in found}
    facts.extend(quarterly_derived_facts(annual, quarters))
    return facts


def _header(payload: Any, *, what: str) -> tuple[int, str, Mapping[str, Any]]:
    if not isinstance(payload, Mapping):
        raise MalformedData(f"{what} is not a companyfacts object")
    facts = payload.get("facts")
    raw_cik = payload.get("cik")
    if not isinstance(facts, Mapping) or raw_cik is None or isinstance(raw_cik, bool):
        raise MalformedData(f"{what} is not companyfacts JSON (it needs 'cik' and a 'facts' object)")
    try:
        cik = int(raw_cik)
    except (TypeError, ValueError) as exc:
        raise MalformedData(f"{what} has a CIK that is not a number: {raw_cik!r}") from exc
    entity = str(payload.get("entityName") or f"CIK {cik}")
    return cik, entity, facts


def _units(concepts: Mapping[str, Any], concept: str) -> Mapping[str, Any]:
    entry = concepts.get(concept.split(":", 1)[1])
    units = entry.get("units") if isinstance(entry, Mapping) else None
    return units if isinstance(units, Mapping) else {}


def _reporting_currency(concepts: Mapping[str, Any], taxonomy: str, entity: str) -> str:
    counts: Counter[str] = Counter()
    for metric in METRICS:
        if metric.unit_kind != "currency":
            continue
        for concept in metric.concepts(taxonomy):
            for unit, rows in _units(concepts, concept).items():
                if len(unit) == 3 and unit.isalpha() and unit.isupper() and isinstance(rows, list):
                    counts[unit] += len(rows)
    if not counts:
        raise UnsupportedFiler(
            f"{entity} tags none of the {taxonomy} concepts this desk reads (revenue, assets, ...)"
        )
    return max(counts, key=lambda unit: (counts[unit], unit))


def _observations(concepts: Mapping[str, Any], taxonomy: str, currency: str) -> ObservationTable:
    table: ObservationTable = {}
    for metric in METRICS:
        for concept in metric.concepts(taxonomy):
            entry = concepts.get(concept.split(":", 1)[1])
            rows = _units(concepts, concept).get(metric.unit(currency))
            if isinstance(rows, list) and rows:
                label = str(entry.get("label") or "") if isinstance(entry, Mapping) else ""
                table[concept] = _first_reported(rows, concept, metric, currency, label[:LABEL_MAX_CHARS])
    return table


def _first_reported(
    rows: list[Any], concept: str, metric: Metric, currency: str, label: str
) -> dict[PeriodKey, Observation]:
    """Per period, the row of the filing that reported it first."""
    chosen: dict[PeriodKey, Mapping[str, Any]] = {}
    order: dict[PeriodKey, tuple[str, str]] = {}
    wants_start = metric.kind == "duration"
    for row in rows:
        if (
            not isinstance(row, Mapping)
            or row.get("form") not in PERIODIC_FORMS
            or ("start" in row) != wants_start
        ):
            continue
        try:
            key = (_date(row["start"]) if wants_start else None, _date(row["end"]))
            rank = (str(row["filed"]), str(row["accn"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedData(f"{concept} has a row without valid start/end/filed/accn: {row!r}") from exc
        if key not in order or rank < order[key]:
            chosen[key], order[key] = row, rank
    unit = metric.unit(currency)
    return {key: _observation(row, key, concept, unit, label) for key, row in chosen.items()}


def _observation(row: Mapping[str, Any], key: PeriodKey, concept: str, unit: str, label: str) -> Observation:
    raw = row.get("val")
    if isinstance(raw, bool) or not isinstance(raw, int | float | Decimal):
        raise MalformedData(f"{concept} has a non-numeric value {raw!r} (accession {row.get('accn')})")
    try:
        filed = _date(row["filed"])
    except ValueError as exc:
        raise MalformedData(f"{concept} has a bad filed date {row.get('filed')!r}") from exc
    # A float only reaches here from a payload decoded without parse_float=Decimal; its repr is the JSON text.
    value = Decimal(repr(raw)) if isinstance(raw, float) else Decimal(raw)
    return Observation(
        concept=concept,
        unit=unit,
        start=key[0],
        end=key[1],
        value=value,
        form=str(row["form"]),
        accession=str(row["accn"]),
        filed=filed,
        label=label,
    )


def _date(raw: Any) -> date:
    return date.fromisoformat(str(raw))


def _period_support(table: ObservationTable) -> dict[Period, int]:
    """How many concepts report each duration period: the period most of them use labels the year."""
    support: Counter[Period] = Counter()
    for observations in table.values():
        for start, end in observations:
            if start is not None and end > start:
                support[Period(start, end)] += 1
    return dict(support)
