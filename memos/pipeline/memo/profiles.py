"""The memo's profiles (seed 000): which specialists run and how many synthesis iterations, configured in the
environment (agents.memo.roster, read once into its settings, memos.pipeline.memo.settings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agents.memo.roster import MAX_FOCUS, MemoConfig, Profile
from memos.pipeline.memo.settings import memo_settings
from memos.pipeline.workflows import ConfigurationError, RunRequest


def _profiles() -> dict[str, Profile]:
    found: dict[str, Profile] = dict(memo_settings().profiles)
    return found


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def profiles() -> dict[str, str]:
    """Smallest first: the form offers the quick profile before the full one."""
    ordered = sorted(_profiles().values(), key=lambda p: (len(p.roster), p.name))
    return {
        p.name: f"{_plural(len(p.roster), 'specialist')}, {_plural(p.iterations, 'synthesis iteration')}"
        for p in ordered
    }


def configure(request: RunRequest) -> dict[str, Any]:
    found = _profiles().get(request.profile)
    if found is None:
        raise ConfigurationError(
            f"Unknown profile {request.profile!r}; choose one of {', '.join(sorted(_profiles()))}."
        )
    focus = request.options.get("focus", "")
    if not isinstance(focus, str) or len(focus) > MAX_FOCUS:
        raise ConfigurationError(f"A memo's focus is a sentence of at most {MAX_FOCUS} characters.")
    return found.config().model_copy(update={"focus": focus.strip()}).model_dump()


def describe(config: Mapping[str, Any]) -> str:
    try:
        memo = MemoConfig.model_validate(config)
    except ValidationError:
        return "an unreadable configuration"
    return (
        f"{memo.name} · {_plural(len(memo.roster), 'specialist')} · "
        f"{_plural(memo.iterations, 'synthesis iteration')}"
    )
