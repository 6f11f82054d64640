"""Fiscal years and quarters, read from the periods a filer reports rather than from a filing's fy/fp.

A companyfacts row's ``fy``/``fp`` describe the filing that carried it (a 10-K for FY2024 also re-reports
FY2022 and FY2023), so they cannot label a period. Instead:

* the filer's fiscal year end is the most reported month-day among its ~1-year periods (52/53-week
  filers such as Apple and NVIDIA drift by up to a week around it, hence a tolerance);
* fiscal year Y is the ~1-year period ending near that month-day in calendar year Y (the label is the
  calendar year in which the fiscal year ends: Apple FY2024 = 2023-10-01..2024-09-28, NVIDIA FY2026 ends
  2026-01-25; a year ending on 2 January counts for the year before);
* a ~3-month period is quarter n of the fiscal year whose end is the first one at or after it, n counted
  back from that year end.
When several periods compete for one label, the one most concepts report wins, so every metric of a
fiscal year shares one start and end.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from agents.data.errors import UnsupportedFiler
from agents.data.types import FiscalPeriod

ANNUAL_DAYS = range(350, 381)  # 52 weeks = 364 days, 53 weeks = 371
QUARTER_DAYS = range(80, 101)  # 13 weeks = 91 days, 14 weeks = 98
YEAR_END_TOLERANCE = timedelta(days=14)
DAYS_PER_QUARTER = 365.25 / 4
QUARTER_PERIODS: dict[int, FiscalPeriod] = {1: "Q1", 2: "Q2", 3: "Q3", 4: "Q4"}


@dataclass(frozen=True, order=True)
class Period:
    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days


@dataclass(frozen=True)
class FiscalCalendar:
    year_end_month: int
    year_end_day: int
    years: Mapping[int, Period]
    quarters: Mapping[tuple[int, int], Period]

    def nominal_year_end(self, year: int) -> date:
        return nominal_date(year, self.year_end_month, self.year_end_day)


def nominal_date(year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError:  # 29 February in a common year
        return date(year, month, day - 1)


def build_calendar(support: Mapping[Period, int], *, entity: str, quarters: bool = True) -> FiscalCalendar:
    """The filer's fiscal years (and quarters) from its duration periods and how many concepts report each."""
    annual = {period: count for period, count in support.items() if period.days in ANNUAL_DAYS}
    if not annual:
        raise UnsupportedFiler(f"{entity} reports no one-year periods, so its fiscal calendar cannot be read")
    month, day = _year_end_month_day(annual)
    years = _fiscal_years(annual, month, day)
    calendar = FiscalCalendar(month, day, years, {})
    if not quarters:
        return calendar
    quarterly = {period: count for period, count in support.items() if period.days in QUARTER_DAYS}
    return FiscalCalendar(month, day, years, _fiscal_quarters(quarterly, calendar))


def _year_end_month_day(annual: Mapping[Period, int]) -> tuple[int, int]:
    weights: Counter[tuple[int, int]] = Counter()
    latest: dict[tuple[int, int], date] = {}
    for period, count in annual.items():
        month_day = (period.end.month, period.end.day)
        weights[month_day] += count
        latest[month_day] = max(latest.get(month_day, period.end), period.end)
    # Most reported; on a tie the month-day of the most recent year, so a changed year end wins.
    return max(weights, key=lambda month_day: (weights[month_day], latest[month_day]))


def _fiscal_years(annual: Mapping[Period, int], month: int, day: int) -> dict[int, Period]:
    candidates: dict[int, list[Period]] = defaultdict(list)
    for period in annual:
        year = first_year_ending_after(period.end, lambda y: nominal_date(y, month, day))
        if abs(period.end - nominal_date(year, month, day)) <= YEAR_END_TOLERANCE:
            candidates[year].append(period)
    return {year: max(periods, key=lambda p: (annual[p], p)) for year, periods in sorted(candidates.items())}


def _fiscal_quarters(
    quarterly: Mapping[Period, int], calendar: FiscalCalendar
) -> dict[tuple[int, int], Period]:
    def year_end(year: int) -> date:
        known = calendar.years.get(year)
        return known.end if known else calendar.nominal_year_end(year)

    candidates: dict[tuple[int, int], list[Period]] = defaultdict(list)
    for period in quarterly:
        year = first_year_ending_after(period.end, year_end)
        number = quarter_number(period.end, year_end(year))
        known = calendar.years.get(year)
        if not 1 <= number <= 4 or (known and period.start < known.start - YEAR_END_TOLERANCE):
            continue
        candidates[(year, number)].append(period)
    return {
        label: max(periods, key=lambda p: (quarterly[p], p)) for label, periods in sorted(candidates.items())
    }


def first_year_ending_after(end: date, year_end: Callable[[int], date]) -> int:
    """The first fiscal year (label) whose end, ``year_end(label)``, is at, after or just before ``end``."""
    year = end.year - 1
    while year_end(year) < end - YEAR_END_TOLERANCE:
        year += 1
    return year


def quarter_number(end: date, year_end: date) -> int:
    """1..4 for a quarter ending ``end`` in the fiscal year ending ``year_end`` (below 1: not in it)."""
    return 4 - round((year_end - end).days / DAYS_PER_QUARTER)
