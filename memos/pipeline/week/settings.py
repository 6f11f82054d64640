"""The desk's week's settings (README: Configuration), read once at start-up
(memos.pipeline.workflow_settings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.env import Env
from agents.weekly import parse_schedule
from memos.pipeline.workflow_settings import Desk, settings_of


@dataclass(frozen=True)
class WeekSettings:
    # The week's slot: "DAY HH:MM" in UTC (after Friday's US close by default) or "off"; the scheduler's
    # tick starts it once a slot, never for a slot that passed before the desk first saw the schedule. Off
    # under test: a suite run on a Friday evening must not start weeks of its own.
    schedule: str
    # Whose briefs the week's runs are (an active analyst): the week's, its screen's and its memos'.
    owner: str
    # The most flagged names that get a closer look (a quick memo) in one week.
    max_names: int
    # The week's token budget: every run it starts is charged to it (None: no budget).
    budget_tokens: int | None


def load(environ: Mapping[str, str], desk: Desk) -> WeekSettings:
    env = Env(environ)
    schedule = env.text("DESK_WEEK_SCHEDULE", "off" if desk.testing else "fri 21:30")
    parse_schedule(schedule)  # a malformed slot stops start-up, naming the variable
    budget = env.whole("DESK_WEEK_BUDGET_TOKENS", 2_000_000, minimum=0)
    return WeekSettings(
        schedule=schedule,
        owner=env.text("DESK_WEEK_OWNER", env.text("SCREEN_SCHEDULE_OWNER", "analyst")),
        max_names=env.whole("DESK_WEEK_MAX_NAMES", 3, minimum=0),
        budget_tokens=budget or None,
    )


def week_settings() -> WeekSettings:
    return settings_of(__package__ or "memos.pipeline.week", WeekSettings)
