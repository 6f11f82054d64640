"""The memo's settings (README: Configuration): its profiles, each a roster of specialists and a depth of
synthesis (``MEMO_*``; agents.memo.roster). Read once at start-up (memos.pipeline.workflow_settings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.env import ConfigError
from agents.memo.roster import Profile, RosterError, load_profiles
from memos.pipeline.workflow_settings import Desk, settings_of


@dataclass(frozen=True)
class MemoSettings:
    profiles: Mapping[str, Profile]


def load(environ: Mapping[str, str], desk: Desk) -> MemoSettings:
    try:
        return MemoSettings(profiles=load_profiles(environ))
    except RosterError as exc:
        raise ConfigError(str(exc)) from exc


def memo_settings() -> MemoSettings:
    return settings_of(__package__ or "memos.pipeline.memo", MemoSettings)
