"""The investment memo (seed 000) as the rest of the desk knows it: its step pages, its part of a version's
page (drift against the memo before, contradictions between its claims and against other briefs' memos,
the weekly schedule, the falsifiers watched), the export's changelog (one row per synthesis iteration),
what it does when newer figures load (checks its falsifiers), its own actions (re-run the evaluation, set
the weekly memo), what the scheduler starts (the weekly memos) and its command (``manage.py run memo``,
alias ``analyze``).

This module is the memo's one public module for code outside its package (memos.services.surfaces reads
``SURFACE``); the run engine never imports it (memos.pipeline.memo names it in its ``Workflow``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.urls import URLPattern, path

from memos.models import ArtefactVersion
from memos.pipeline.memo.desk import pages
from memos.pipeline.memo.desk.contradictions import memo_contradictions
from memos.pipeline.memo.desk.drift import memo_drift
from memos.pipeline.memo.desk.export import iterations
from memos.pipeline.memo.desk.falsifier_hits import check_after_commit
from memos.pipeline.memo.desk.register import register_rows
from memos.pipeline.memo.desk.schedule import due_memos, home_schedules, memo_schedule_panel
from memos.pipeline.memo.desk.week import WEEK_PART
from memos.services.surfaces import Export, Panel, StepPages, Surface, VersionPage


def _drift(user: User, version: ArtefactVersion, previous: ArtefactVersion | None) -> dict[str, Any] | None:
    found = memo_drift(previous, version)
    return {"drift": found, "previous": previous} if found else None


def _contradictions(
    user: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[str, Any] | None:
    return memo_contradictions(user, version)


def _schedule(
    user: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[str, Any] | None:
    panel = memo_schedule_panel(user, version.brief)
    return {"memo_schedule": panel} if panel is not None else None


def _register(
    user: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[str, Any] | None:
    rows = register_rows(version)
    return {"falsifier_watches": rows} if rows else None


def _urls() -> Sequence[URLPattern]:
    from memos.pipeline.memo.desk import views

    return (
        path("runs/<uuid:run_id>/rerun-evaluation/", views.rerun_evaluation_view, name="rerun_evaluation"),
        path(
            "briefs/<int:brief_id>/memo-schedule/", views.set_brief_memo_schedule, name="brief_memo_schedule"
        ),
    )


def _weekly_memos(now: datetime) -> list[str]:
    return due_memos(now=now)


def _command() -> type[BaseCommand]:
    from memos.pipeline.memo.desk.command import MemoCommand

    return MemoCommand


SURFACE = Surface(
    steps=StepPages(builders=pages.BUILDERS, evidence=pages.evidence_ids),
    version=VersionPage(
        panels=(
            Panel("memos/versions/_drift.html", _drift, place="top"),
            Panel("memos/versions/_contradictions.html", _contradictions, place="top"),
            Panel("memos/versions/_memo_schedule.html", _schedule),
            Panel("memos/versions/_falsifiers.html", _register, place="below"),
        )
    ),
    export=Export(changelog=iterations),
    urls=_urls,
    ticks=(_weekly_memos,),
    week=(WEEK_PART,),
    schedules=home_schedules,
    command=_command,
    on_new_facts=(check_after_commit,),
)
