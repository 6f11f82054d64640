"""A weekly time of day in UTC, as the desk's schedules write it ("fri 21:30", or "off"): the weekly screen's
``SCREEN_SCHEDULE``, a memo brief's weekly position, and any workflow that runs once a week."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta

from agents.env import ConfigError

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SCHEDULE = re.compile(r"^(?P<day>[a-z]{3})\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})$")


class ScheduleError(ConfigError):
    """A weekly schedule that is not "DAY HH:MM" or "off"; the message names the setting."""


# The days as pages write them, Monday first (a schedule's weekday is an index into it).
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def parse_schedule(text: str, *, setting: str = "SCREEN_SCHEDULE") -> tuple[int, time] | None:
    """("fri 21:30") -> (4, 21:30); "off" -> None. ``setting`` names where the text came from."""
    cleaned = text.strip().lower()
    if cleaned in {"", "off"}:
        return None
    found = SCHEDULE.match(cleaned)
    if found is None or found["day"] not in DAYS:
        raise ScheduleError(f'{setting} must be "DAY HH:MM" (UTC, e.g. "fri 21:30") or "off", got {text!r}')
    hour, minute = int(found["hour"]), int(found["minute"])
    if hour > 23 or minute > 59:
        raise ScheduleError(f"{setting} has no such time of day: {text!r}")
    return DAYS.index(found["day"]), time(hour, minute)


def last_slot(now: datetime, weekday: int, at: time) -> datetime:
    """The latest time on or before ``now`` that is ``at`` (UTC) on ``weekday``."""
    today = now.astimezone(UTC)
    slot = datetime.combine(today.date(), at, tzinfo=UTC) - timedelta(days=(today.weekday() - weekday) % 7)
    return slot if slot <= today else slot - timedelta(days=7)
