"""The C-suite deck (seed 001) as the rest of the desk knows it: its step pages (slides drawn from each draft
and lap), its part of a version's page (the deck viewer, its escalation, its downloads, the refinement
schedule and a committee member's scores for the judge's calibration), the files frozen with a version (the
slides as PDF, the PPTX), the export's changelog (one row per lap), its own URLs, the refinement cycles the
scheduler starts, and its command (``manage.py run deck``, alias ``deck``).

This module is the deck's one public module for code outside its package (memos.services.surfaces reads
``SURFACE``; the admin and the calibration command call ``calibration`` and ``gold_scores`` through it);
the run engine never imports it (memos.pipeline.deck names it in its ``Workflow``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.urls import URLPattern, path

from agents.deck.render.pdf import deck_html
from agents.deck.render.pptx import render_pptx
from memos.models import ArtefactVersion
from memos.pipeline.deck.calibration import configured_scorer
from memos.pipeline.deck.desk import calibration, escalation, factcheck, gold_scores, pages
from memos.pipeline.deck.desk.export import laps
from memos.pipeline.deck.desk.schedule import cycles_due, home_schedules, schedule_panel
from memos.pipeline.deck.desk.viewer import DECK_PPTX, deck_context, version_deck
from memos.pipeline.deck.desk.week import WEEK_PART
from memos.services.surfaces import (
    RENDER_PDF,
    Export,
    Files,
    FrozenFile,
    Panel,
    Rendered,
    StepPages,
    Surface,
    ToPrint,
    VersionPage,
)

__all__ = ["SURFACE", "calibration", "configured_scorer", "escalation", "factcheck", "gold_scores"]

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def _scoring(user: User, version: ArtefactVersion, previous: ArtefactVersion | None) -> dict[str, Any] | None:
    panel = gold_scores.scoring_panel(user, version)
    return {"scoring": panel} if panel is not None else None


def _schedule(
    user: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[str, Any] | None:
    panel = schedule_panel(user, version.brief)
    return {"schedule": panel} if panel is not None else None


def _files(version: ArtefactVersion) -> list[Rendered | ToPrint]:
    output = version_deck(version)
    if output is None:
        raise ValueError(f"{version} is not a deck this code can read")
    # The slides' PDF is printed from their HTML off the run's path (memos.services.version_files); it links
    # nothing but its own data: attachment, so no static file is served to it.
    return [
        ToPrint(RENDER_PDF, deck_html(output.deck), base_url=None, static=False),
        Rendered(DECK_PPTX, PPTX, render_pptx(output.deck)),
    ]


def _urls() -> Sequence[URLPattern]:
    from memos.pipeline.deck.desk import rubric_views, viewer, views

    return (
        path("briefs/<int:brief_id>/schedule/", views.set_brief_schedule, name="brief_schedule"),
        path("briefs/<int:brief_id>/refine-now/", views.refine_now, name="brief_refine_now"),
        path(
            "runs/<uuid:run_id>/steps/<int:step_id>/adopt-rubric/",
            rubric_views.adopt_rubric_view,
            name="adopt_rubric",
        ),
        path(
            "runs/<uuid:run_id>/steps/<int:step_id>/slides/<int:number>.png",
            viewer.step_slide,
            name="run_step_slide",
        ),
        path("versions/<int:version_id>/slides/<int:number>.png", viewer.version_slide, name="version_slide"),
        path("versions/<int:version_id>/deck.pdf", viewer.version_deck_pdf, name="version_deck_pdf"),
        path("versions/<int:version_id>/deck.pptx", viewer.version_deck_pptx, name="version_deck_pptx"),
        path("versions/<int:version_id>/deck.json", viewer.version_deck_json, name="version_deck_json"),
        path("versions/<int:version_id>/scores.json", viewer.version_scores_json, name="version_scores_json"),
        path("versions/<int:version_id>/score/", views.score, name="version_score"),
    )


def _command() -> type[BaseCommand]:
    from memos.pipeline.deck.desk.command import DeckCommand

    return DeckCommand


SURFACE = Surface(
    steps=StepPages(
        builders=pages.BUILDERS,
        evidence=pages.evidence_ids,
        sealed=gold_scores.judge_sealed_in_run,
    ),
    version=VersionPage(
        template="memos/decks/_version_deck.html",
        context=deck_context,
        banner="memos/decks/_escalated.html",
        downloads="memos/decks/_downloads.html",
        panels=(
            Panel("memos/versions/_scoring.html", _scoring),
            Panel("memos/decks/_schedule.html", _schedule),
        ),
        script="js/deck.js",
        sealed=gold_scores.judge_sealed,
    ),
    files=Files(
        files=(
            FrozenFile(RENDER_PDF, "Slides (PDF)", lambda version, stem: f"{stem}-deck.pdf"),
            FrozenFile(DECK_PPTX, "PowerPoint (PPTX)", lambda version, stem: f"{stem}-deck.pptx"),
        ),
        render=_files,
    ),
    readable=lambda version: version_deck(version) is not None,
    export=Export(changelog=laps),
    urls=_urls,
    ticks=(cycles_due,),
    week=(WEEK_PART,),
    schedules=home_schedules,
    command=_command,
)
