"""The screen's profile and how a run is configured from a strategy and a watchlist. Seed 003's rule on who
reviews (the managing director on another model family than the analysts it reviews) is the desk's one check
(memos.pipeline.judge_families), on the models the run's strategy names: ``SCREEN_REQUIRE_SEPARATE_REVIEWER``
asks it for the screen's runs alone, as ``REQUIRE_SEPARATE_JUDGE`` asks it for every workflow's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agents.screen.config import ScreenConfig, Strategy, StrategyError, load_strategy, parse_strategy
from agents.screen.schemas import SEND_BACKS
from memos.pipeline.screen import universe
from memos.pipeline.screen.settings import screen_settings
from memos.pipeline.workflows import ConfigurationError, RunRequest

WEEKLY = "weekly"
TOKENS_PER_CALL = 6_000


def profiles() -> dict[str, str]:
    return {WEEKLY: "by sector: quant by code, news and synthesis per sector, one review"}


def default_strategy() -> Strategy:
    """The strategy in ``SCREEN_STRATEGY`` (the bundled demo: stocknet, the week ending 2015-08-21)."""
    try:
        return load_strategy(screen_settings().strategy.read_text(encoding="utf-8"))
    except (OSError, StrategyError) as exc:
        raise ConfigurationError(
            f"The desk's screen strategy {screen_settings().strategy} is unusable: {exc}"
        ) from exc


def separate_judge() -> str:
    """``SCREEN_REQUIRE_SEPARATE_REVIEWER`` when it is on (Workflow.separate_judge), else ""."""
    return "SCREEN_REQUIRE_SEPARATE_REVIEWER" if screen_settings().require_separate_reviewer else ""


def configure(request: RunRequest) -> dict[str, Any]:
    if request.profile != WEEKLY:
        raise ConfigurationError(f"Unknown profile {request.profile!r}; choose {WEEKLY}.")
    raw = request.options.get("strategy")
    try:
        strategy = parse_strategy(raw) if raw is not None else default_strategy()
    except StrategyError as exc:
        raise ConfigurationError(f"The strategy is malformed: {exc}") from exc
    symbols = list(request.symbols) or universe.default_symbols(strategy)
    missing = universe.unpriced(strategy, symbols)
    if missing:
        raise ConfigurationError(
            f"No daily prices for {', '.join(missing)}: the desk cannot screen "
            f"{'them' if len(missing) > 1 else 'it'}."
        )
    screen = ScreenConfig(name=WEEKLY, strategy=strategy, universe=universe.resolve(strategy, symbols))
    return screen.model_dump(mode="json")


def run_models(config: Mapping[str, Any]) -> Mapping[str, str]:
    """The models the run's strategy names per role, over the desk's settings."""
    return ScreenConfig.model_validate(config).strategy.models


def budget(config: Mapping[str, Any], default: int | None) -> int | None:
    """A run's token budget: the desk's default, or enough for the call bound if that is more (with the
    sectors the managing director may send back to the senior analyst)."""
    if default is None:
        return None
    return max(default, (ScreenConfig.model_validate(config).call_bound() + SEND_BACKS) * TOKENS_PER_CALL)


def describe(config: Mapping[str, Any]) -> str:
    try:
        screen = ScreenConfig.model_validate(config)
    except ValidationError:
        return "a screen"
    as_of = screen.strategy.as_of or "the last session"
    symbols, sectors = len(screen.universe.symbols), len(screen.sector_names)
    return (
        f"{screen.name} · {symbols} symbol{'' if symbols == 1 else 's'} in {sectors} "
        f"sector{'' if sectors == 1 else 's'} · as of {as_of}"
    )
