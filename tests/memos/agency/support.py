"""Starting agency runs of a profile changed for a test (two personas, more rounds): configured and planned
so, as a profile set in the environment would be."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings

from memos.models import Brief, Run
from memos.services.runs import start_run


def start_agency(brief: Brief, user: User, profile: str, **changes: Any) -> Run:
    """A run of ``profile`` with ``changes`` to it (its personas, its rounds), configured and planned so."""
    agency = settings.AGENCY
    found = replace(agency.profiles[profile], **changes)
    with override_settings(AGENCY=replace(agency, profiles={**agency.profiles, profile: found})):
        return start_run(brief=brief, user=user, profile=profile, enqueue=False, workflow="agency")
