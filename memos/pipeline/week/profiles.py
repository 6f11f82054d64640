"""The week's one profile and how a run of it is configured: the week it covers (the latest the desk's data
holds unless a person names one) and how many flagged names get a closer look."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from memos.pipeline.composition import PartRefused, Screens
from memos.pipeline.week.parts import played
from memos.pipeline.week.settings import week_settings
from memos.pipeline.workflows import ConfigurationError, RunRequest

WEEKLY = "weekly"
MOST_NAMES = 10


def profiles() -> dict[str, str]:
    return {WEEKLY: "the screen, a quick memo on each flagged name, the followed decks' cycles, one digest"}


def _week(raw: Any, symbols: tuple[str, ...]) -> date | None:
    if raw in (None, ""):
        found = played(Screens)
        if found is None:
            raise ConfigurationError("No workflow of this desk screens a watchlist: the week cannot start.")
        try:
            return found[1].latest_week(symbols)
        except PartRefused as exc:
            raise ConfigurationError(str(exc)) from exc
    try:
        return raw if isinstance(raw, date) else date.fromisoformat(str(raw))
    except ValueError as exc:
        raise ConfigurationError(f"Not a date: {raw!r} (write it as YYYY-MM-DD).") from exc


def configure(request: RunRequest) -> dict[str, Any]:
    if request.profile != WEEKLY:
        raise ConfigurationError(f"Unknown profile {request.profile!r}; choose {WEEKLY}.")
    names = request.options.get("max_names", week_settings().max_names)
    if not isinstance(names, int) or not 0 <= names <= MOST_NAMES:
        raise ConfigurationError(f"A week looks closer at 0 to {MOST_NAMES} names, not {names!r}.")
    week = _week(request.options.get("as_of"), request.symbols)
    return {"name": WEEKLY, "as_of": week.isoformat() if week else None, "max_names": names}


def describe(config: Mapping[str, Any]) -> str:
    week = config.get("as_of") or "the last session"
    names = int(config.get("max_names", 0))
    return f"{WEEKLY} · the week ending {week} · up to {names} closer look{'' if names == 1 else 's'}"


def budget(config: Mapping[str, Any], default: int | None) -> int | None:
    """The week's own budget (``DESK_WEEK_BUDGET_TOKENS``): every run it starts is charged to it."""
    return week_settings().budget_tokens
