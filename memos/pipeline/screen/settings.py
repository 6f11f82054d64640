"""The weekly screen's settings (README: Configuration), read once at start-up
(memos.pipeline.workflow_settings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agents.env import Env
from agents.weekly import parse_schedule
from memos.pipeline.workflow_settings import Desk, settings_of


@dataclass(frozen=True)
class ScreenSettings:
    # The strategy a screen started from the brief form (or manage.py screen without --config) uses; its
    # universe is replaced by the brief's watchlist when one is given.
    strategy: Path
    # Seed 003: refuse a screen whose managing director runs on the analysts' model family.
    require_separate_reviewer: bool
    # The weekly screen's slot (seed 002: a weekly run) on its own: "DAY HH:MM" in UTC, or "off" (the
    # default: the desk's week, DESK_WEEK_SCHEDULE, screens after Friday's close as its first part, in the
    # same screen line). It screens the strategy's watchlist as ``schedule_owner``'s brief; the scheduler's
    # tick checks it (memos.services.scheduler).
    schedule: str
    schedule_owner: str
    # In live mode, a screen reads its watchlist's daily prices from the live price adapter (Stooq over
    # HTTPS, agents.data.prices.LivePriceSource) instead of the bundled files; a strategy's own price folder
    # still wins.
    live_prices: bool


def load(environ: Mapping[str, str], desk: Desk) -> ScreenSettings:
    env = Env(environ)
    schedule = env.text("SCREEN_SCHEDULE", "off")
    parse_schedule(schedule)  # a malformed slot stops start-up, naming the variable
    return ScreenSettings(
        strategy=Path(env.text("SCREEN_STRATEGY", str(desk.base_dir / "data" / "screen" / "strategy.yaml"))),
        require_separate_reviewer=env.flag("SCREEN_REQUIRE_SEPARATE_REVIEWER", False),
        schedule=schedule,
        schedule_owner=env.text("SCREEN_SCHEDULE_OWNER", "analyst"),
        live_prices=desk.data_mode == "live" and env.flag("SCREEN_LIVE_PRICES", False),
    )


def screen_settings() -> ScreenSettings:
    return settings_of(__package__ or "memos.pipeline.screen", ScreenSettings)
