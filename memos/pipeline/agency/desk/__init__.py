"""The agency (seed 004) as the rest of the desk knows it: its step pages (the debate's document grows turn by
turn while its move is debated), its part of a version's page (the ranking, the recommended moves in full,
every move's debate one click away, from the frozen content alone) and its command (``manage.py run
agency``, alias ``agency``), and the agency's part of ``manage.py bench_run``. Its frozen file is the version
printed, as any workflow's.

This module is the agency's one public module for code outside its package (memos.services.surfaces reads
``SURFACE``); the run engine never imports it (memos.pipeline.agency names it in its ``Workflow``).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memos.models import ArtefactVersion
from memos.pipeline.agency.desk import pages
from memos.pipeline.agency.desk.bench import agency_bench, agency_stability
from memos.pipeline.agency.desk.version import agency_context
from memos.services.surfaces import StepPages, Surface, VersionPage

__all__ = ["SURFACE", "agency_bench", "agency_stability"]

FROZEN = ("ranking", "moves", "debates")  # what a version's content holds for its page


def _readable(version: ArtefactVersion) -> bool:
    content: Any = version.content
    return isinstance(content, dict) and all(key in content for key in FROZEN)


def _command() -> type[BaseCommand]:
    from memos.pipeline.agency.desk.command import AgencyCommand

    return AgencyCommand


SURFACE = Surface(
    steps=StepPages(builders=pages.BUILDERS, growing=pages.GROWING, evidence=pages.evidence_ids),
    version=VersionPage(template="memos/agency/_version_agency.html", context=agency_context),
    command=_command,
    readable=_readable,
)
