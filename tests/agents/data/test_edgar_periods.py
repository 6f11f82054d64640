"""Fiscal calendars from reported periods: 52/53-week years, year-end labels, quarter positions."""

from __future__ import annotations

from datetime import date

import pytest

from agents.data.edgar.periods import Period, build_calendar
from agents.data.errors import UnsupportedFiler

# Apple-like: years end on the last Saturday of September, so year ends drift between 24 Sept and 1 Oct.
APPLE_YEARS = [
    Period(date(2021, 9, 26), date(2022, 9, 24)),
    Period(date(2022, 9, 25), date(2023, 9, 30)),  # a 53-week year
    Period(date(2023, 10, 1), date(2024, 9, 28)),
]


def test_a_52_53_week_filer_gets_one_label_per_year() -> None:
    calendar = build_calendar(dict.fromkeys(APPLE_YEARS, 10), entity="Apple-like")
    assert dict(calendar.years) == {2022: APPLE_YEARS[0], 2023: APPLE_YEARS[1], 2024: APPLE_YEARS[2]}


def test_quarters_are_numbered_back_from_the_year_end_including_a_14_week_first_quarter() -> None:
    quarters = {
        Period(date(2022, 9, 25), date(2022, 12, 31)): 5,  # 14 weeks
        Period(date(2023, 1, 1), date(2023, 4, 1)): 5,
        Period(date(2023, 4, 2), date(2023, 7, 1)): 5,
        Period(date(2024, 9, 29), date(2024, 12, 28)): 5,  # after the last known year: FY2025 Q1
    }
    calendar = build_calendar({**dict.fromkeys(APPLE_YEARS, 10), **quarters}, entity="Apple-like")
    assert list(calendar.quarters) == [(2023, 1), (2023, 2), (2023, 3), (2025, 1)]


def test_a_year_ending_in_the_first_days_of_january_counts_for_the_year_before() -> None:
    years = {
        Period(date(2020, 1, 1), date(2020, 12, 31)): 8,
        Period(date(2021, 1, 1), date(2022, 1, 2)): 8,  # a 53-week year ending on 2 January
        Period(date(2022, 1, 3), date(2022, 12, 31)): 8,
    }
    calendar = build_calendar(years, entity="Calendar-year filer")
    assert sorted(calendar.years) == [2020, 2021, 2022]
    assert calendar.years[2021].end == date(2022, 1, 2)


def test_the_period_most_concepts_report_wins_a_label() -> None:
    main = Period(date(2023, 1, 1), date(2023, 12, 31))
    odd = Period(date(2023, 1, 15), date(2023, 12, 31))  # 350 days: also "about a year"
    calendar = build_calendar({main: 12, odd: 1}, entity="Filer")
    assert calendar.years[2023] == main


def test_twelve_months_ending_away_from_the_year_end_are_not_a_fiscal_year() -> None:
    years = {Period(date(2022, 1, 1), date(2022, 12, 31)): 9, Period(date(2022, 7, 1), date(2023, 6, 30)): 1}
    calendar = build_calendar(years, entity="Filer")
    assert list(calendar.years.values()) == [Period(date(2022, 1, 1), date(2022, 12, 31))]


def test_quarters_can_be_left_out_for_annual_only_filers() -> None:
    support = {
        Period(date(2024, 1, 1), date(2024, 12, 31)): 5,
        Period(date(2024, 1, 1), date(2024, 3, 31)): 5,
    }
    assert build_calendar(support, entity="20-F filer", quarters=False).quarters == {}


def test_a_filer_with_no_one_year_period_is_refused() -> None:
    with pytest.raises(UnsupportedFiler, match="no one-year periods"):
        build_calendar({Period(date(2024, 1, 1), date(2024, 3, 31)): 4}, entity="New Filer Inc.")
