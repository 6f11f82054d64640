"""Which week a screen covers when nobody names one: the latest week the desk's data holds (the last Friday
on or before the benchmark's last bundled session), so neither the week nor the weekly screen re-screens
the strategy file's example week every Friday."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from agents.data.errors import DataError
from agents.screen.config import Strategy
from memos.pipeline.screen import universe
from memos.pipeline.screen.profiles import default_strategy
from memos.pipeline.screen.settings import screen_settings
from memos.pipeline.workflows import ConfigurationError

FRIDAY = 4


def last_friday(day: date) -> date:
    """The last Friday on or before ``day``: the end of the last whole trading week."""
    return day - timedelta(days=(day.weekday() - FRIDAY) % 7)


def latest_week(strategy: Strategy | None = None, symbols: Sequence[str] = ()) -> date | None:
    """The week the desk's data lets it screen last: the last Friday on or before the last session the
    watchlist's bundled prices hold (the latest any of its symbols reaches, and never past the benchmark's);
    None with live prices (the screen then ends on the last close the provider gives)."""
    if screen_settings().live_prices:
        return None
    chosen = strategy or default_strategy()
    source = universe.prices(chosen)
    try:
        last = source.series(chosen.benchmark).last_date
    except DataError as exc:
        raise ConfigurationError(f"The desk holds no prices for {chosen.benchmark}: {exc}") from exc
    held = []
    for symbol in symbols or universe.default_symbols(chosen):
        try:
            held.append(source.series(symbol).last_date)
        except DataError:
            continue  # the screen names the symbols it has no prices for
    return last_friday(min(last, max(held)) if held else last)


def this_weeks_strategy(as_of: date | None = None, symbols: Sequence[str] = ()) -> Strategy:
    """The desk's strategy for the week ending ``as_of`` (default: the latest week the data holds for
    ``symbols``, or the strategy's watchlist), so a scheduled screen never re-screens the strategy file's
    own example week."""
    strategy = default_strategy()
    week = as_of or latest_week(strategy, symbols)
    return strategy.model_copy(update={"as_of": week}) if week is not None else strategy
