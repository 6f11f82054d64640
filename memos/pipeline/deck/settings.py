"""The deck's settings (README: Configuration), read once at start-up (memos.pipeline.workflow_settings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.deck.spec import Theme, deck_theme
from agents.env import Env
from memos.pipeline.workflow_settings import Desk, settings_of


@dataclass(frozen=True)
class DeckSettings:
    # The refinement loop stops cleanly before a lap once a run has spent this many tokens (None: no bound).
    cycle_budget_tokens: int | None
    # Seed 001 section 2: run the loop only on an R2 version that passed its check against human gold scores
    # (manage.py calibrate_judge); otherwise the run page says the loop's gains may be judge variance. Off by
    # default: a new desk has no gold scores yet.
    require_calibration: bool
    # The firm's look on every deck: its name on the title slide, and the colours both renderers draw with.
    # Frozen with each deck version, so a later change never alters a frozen one.
    theme: Theme


def load(environ: Mapping[str, str], desk: Desk) -> DeckSettings:
    env = Env(environ)
    return DeckSettings(
        cycle_budget_tokens=env.whole("DECK_CYCLE_BUDGET_TOKENS", 0, minimum=0) or None,
        require_calibration=env.flag("DECK_REQUIRE_CALIBRATION", False),
        theme=deck_theme(
            firm=env.text("DECK_FIRM_NAME", "Analyst Desk"),
            accent=env.text("DECK_ACCENT_COLOUR", "#1F4E79"),
            ink=env.text("DECK_INK_COLOUR", "#1F2933"),
            negative=env.text("DECK_NEGATIVE_COLOUR", "#A23B3B"),
        ),
    )


def deck_settings() -> DeckSettings:
    return settings_of(__package__ or "memos.pipeline.deck", DeckSettings)
