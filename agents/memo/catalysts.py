"""Catalyst dates, checked by code: after the data's as-of date and within the memo's horizon.

The memo speaks as of its data (the newest filing, price session or document its evidence holds), so its
horizon runs from that day: the analyst's own words set its length when the brief names one ("over the next
eighteen months", "a 2-year view"), else ``DEFAULT_HORIZON_MONTHS``. A catalyst dated on or before the as-of
date is history the data already holds, not a catalyst; one past the horizon is outside the question asked.
Both come only from the data and the brief, never from the clock, so the same inputs give the same prompt
and the same check on any day (and a rerun is answered from the cache).
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from pydantic import BaseModel, ConfigDict

from agents.memo.schemas import Catalyst, MemoDraft

DEFAULT_HORIZON_MONTHS = 12
MAX_HORIZON_MONTHS = 60
WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "eighteen": 18,
    "twenty-four": 24,
    "thirty-six": 36,
}
_COUNT = r"(\d{1,2}|" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")"
HORIZON = re.compile(
    rf"\b(?:next|coming|over|within|in|horizon of|on a)\s+(?:the\s+)?(?:next\s+)?{_COUNT}[\s-]"
    r"(month|quarter|year)s?\b"
    rf"|\b{_COUNT}[\s-](month|quarter|year)s?\s+(?:view|horizon|outlook|holding period)\b",
    re.IGNORECASE,
)
MONTHS_PER = {"month": 1, "quarter": 3, "year": 12}


class Window(BaseModel):
    """The dates a catalyst may carry: after ``as_of``, on or before ``until``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: date
    until: date
    horizon_months: int

    def problem(self, catalyst: Catalyst) -> str:
        """Why the catalyst's date is outside the window, in code's words ("" when it is inside)."""
        day = date.fromisoformat(catalyst.date)
        if day <= self.as_of:
            return f"dated {catalyst.date}, on or before the data's as-of date {self.as_of.isoformat()}"
        if day > self.until:
            return (
                f"dated {catalyst.date}, past the memo's {self.horizon_months}-month horizon "
                f"(it ends {self.until.isoformat()})"
            )
        return ""


class DroppedCatalyst(BaseModel):
    """A catalyst code took out of the memo, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    catalyst: Catalyst
    reason: str


def horizon_months(brief: str) -> int:
    """The horizon the analyst's brief names, in months (the first one it names), else the default."""
    match = HORIZON.search(brief)
    if match is None:
        return DEFAULT_HORIZON_MONTHS
    count, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    number = int(count) if count.isdigit() else WORDS[count.lower()]
    months = number * MONTHS_PER[unit.lower()]
    return min(MAX_HORIZON_MONTHS, max(1, months))


def add_months(day: date, months: int) -> date:
    month_index = day.month - 1 + months
    year, month = day.year + month_index // 12, month_index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def window(as_of: date | None, brief: str) -> Window | None:
    """The catalyst window of a run; None when the data has no as-of date (written by an older desk)."""
    if as_of is None:
        return None
    months = horizon_months(brief)
    return Window(as_of=as_of, until=add_months(as_of, months), horizon_months=months)


def outside(memo: MemoDraft, within: Window | None) -> list[DroppedCatalyst]:
    """The memo's catalysts whose dates lie outside the window, with why."""
    if within is None:
        return []
    return [
        DroppedCatalyst(catalyst=catalyst, reason=reason)
        for catalyst in memo.catalysts
        if (reason := within.problem(catalyst))
    ]


def kept(memo: MemoDraft, within: Window | None) -> list[Catalyst]:
    """The memo's catalysts inside the window: what the memo shows."""
    dropped = {item.catalyst for item in outside(memo, within)}
    return [catalyst for catalyst in memo.catalysts if catalyst not in dropped]
