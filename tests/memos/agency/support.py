"""Starting agency runs of a profile changed for a test (two personas, more rounds): configured and planned
so, as a profile set in the environment would be."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.contrib.auth.models import User

from memos.models import Brief, Run
from memos.pipeline.agency.settings import agency_settings
from memos.services.runs import start_run
from tests.memos.workflow_settings import changed


def start_agency(brief: Brief, user: User, profile: str, **changes: Any) -> Run:
    """A run of ``profile`` with ``changes`` to it (its personas, its rounds), configured and planned so."""
    agency = agency_settings()
    found = replace(agency.profiles[profile], **changes)
    with changed("memos.pipeline.agency", profiles={**agency.profiles, profile: found}):
        return start_run(brief=brief, user=user, profile=profile, enqueue=False, workflow="agency")
