"""The deck's profiles (seed 001): how many times the first draft may be rebuilt to clear R1 and how many
laps the R2 loop may take, each capped by the run's pinned rubrics, so the plan a run page draws and the
loop that runs agree for the life of the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agents.deck.profile import DECK_PROFILES, DeckConfig, deck_config
from agents.deck.rubrics import DECK_R1, DECK_R2
from memos.pipeline.deck.settings import deck_settings
from memos.pipeline.prompts import pinned_rubric
from memos.pipeline.workflows import ConfigurationError, RunRequest


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def profiles() -> dict[str, str]:
    ordered = sorted(DECK_PROFILES.items(), key=lambda item: (item[1], item[0]))
    return {
        name: f"up to {_plural(rebuilds, 'rebuild')} of the draft, up to {_plural(laps, 'refinement lap')}"
        for name, (rebuilds, laps) in ordered
    }


def configure(request: RunRequest) -> dict[str, Any]:
    r1, r2 = pinned_rubric(DECK_R1, request.rubric_pins), pinned_rubric(DECK_R2, request.rubric_pins)
    base = request.options.get("base_version")
    try:
        config = deck_config(
            request.profile,
            max_rebuilds=r1.thresholds["max_rebuilds"],
            max_iterations=r2.thresholds["max_iterations"],
            budget=deck_settings().cycle_budget_tokens,
        )
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from exc
    if base is not None:
        config = config.model_copy(update={"base_version": int(base)})
    return config.model_dump()


def describe(config: Mapping[str, Any]) -> str:
    try:
        deck = DeckConfig.model_validate(config)
    except ValidationError:
        return "an unreadable configuration"
    line = (
        f"{deck.name} · up to {_plural(deck.max_rebuilds, 'rebuild')} · up to {_plural(deck.max_laps, 'lap')}"
    )
    return line + (" · a refinement cycle of the latest deck version" if deck.base_version else "")
