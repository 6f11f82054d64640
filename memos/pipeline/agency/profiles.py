"""The agency's profiles and how a run is configured from one. Seed 003's rule on who judges (the board's
scores and the jury on another model family than the moves' authors and the debate) is the desk's one check
(memos.pipeline.judge_families): ``AGENCY_REQUIRE_SEPARATE_JUDGE`` asks it for the agency's runs alone, as
``REQUIRE_SEPARATE_JUDGE`` asks it for every workflow's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agents.agency.config import AgencyConfig, AgencySettings
from memos.pipeline.agency.settings import agency_settings
from memos.pipeline.workflows import ConfigurationError, RunRequest


def _settings() -> AgencySettings:
    return agency_settings()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def profiles() -> dict[str, str]:
    """Smallest first: the form offers the quick profile before the full one."""
    ordered = sorted(_settings().profiles.values(), key=lambda p: (len(p.personas) * p.rounds, p.name))
    return {
        p.name: f"{_plural(len(p.personas), 'analyst')}, {_plural(len(p.personas) * 3, 'move')}, "
        f"{_plural(p.rounds, 'round')} of debate"
        for p in ordered
    }


def separate_judge() -> str:
    """``AGENCY_REQUIRE_SEPARATE_JUDGE`` when it is on (Workflow.separate_judge), else ""."""
    return "AGENCY_REQUIRE_SEPARATE_JUDGE" if _settings().require_separate_judge else ""


def configure(request: RunRequest) -> dict[str, Any]:
    agency = _settings()
    found = agency.profiles.get(request.profile)
    if found is None:
        raise ConfigurationError(
            f"Unknown profile {request.profile!r}; choose one of {', '.join(sorted(agency.profiles))}."
        )
    order = request.options.get("order", 0)
    if not isinstance(order, int) or order < 0:
        raise ConfigurationError(f"The order of the moves is a whole number from 0, got {order!r}.")
    return found.config(sequential=agency.sequential, jury=agency.jury, order=order).model_dump()


def budget(config: Mapping[str, Any], default: int | None) -> int | None:
    """A run's token budget: ``AGENCY_RUN_BUDGET_TOKENS`` if set, else sized from the profile's calls (a full
    run makes about 900); none when budgets are off (``LLM_RUN_BUDGET_TOKENS=0``)."""
    if default is None:
        return None
    return _settings().run_budget_tokens or AgencyConfig.model_validate(config).budget_tokens()


def describe(config: Mapping[str, Any]) -> str:
    try:
        agency = AgencyConfig.model_validate(config)
    except ValidationError:
        return "an unreadable configuration"
    order = " · one move at a time" if agency.sequential else ""
    return (
        f"{agency.name} · {_plural(len(agency.personas), 'analyst')} · {_plural(agency.generated, 'move')} · "
        f"{_plural(agency.rounds, 'round')}{order}"
    )
