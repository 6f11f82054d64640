"""The agency's settings (README: Configuration): its profiles (personas and rounds), the seed's one move at a
time, the most moves one worker debates at once, its token budget, whether a board scoring on the analysts'
or the critic's family is refused, and the jury (agents.agency.config). Read once at start-up
(memos.pipeline.workflow_settings)."""

from __future__ import annotations

from collections.abc import Mapping

from agents.agency.config import AgencySettings, load_agency_settings
from memos.pipeline.workflow_settings import Desk, settings_of


def load(environ: Mapping[str, str], desk: Desk) -> AgencySettings:
    return load_agency_settings(environ)


def agency_settings() -> AgencySettings:
    return settings_of(__package__ or "memos.pipeline.agency", AgencySettings)
