"""The weekly sector screen (seed 002) as the rest of the desk knows it: its step pages, its part of a
version's page (the dashboard: summary, sector themes, the symbol inspector), the files frozen with a
version (the standalone HTML report and the report printed), the weekly screen the scheduler starts and its
command (``manage.py run screen``, alias ``screen``).

This module is the screen's one public module for code outside its package (memos.services.surfaces reads
``SURFACE``); the run engine never imports it (memos.pipeline.screen names it in its ``Workflow``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.management.base import BaseCommand
from django.urls import URLPattern, path

from memos.models import ArtefactVersion
from memos.pipeline.screen.desk import pages
from memos.pipeline.screen.desk.dashboard import dashboard_of
from memos.pipeline.screen.desk.report import report_html
from memos.pipeline.screen.desk.schedule import home_schedules, screens_due
from memos.pipeline.screen.desk.week import WEEK_PART
from memos.services.surfaces import (
    RENDER_PDF,
    Files,
    FrozenFile,
    Rendered,
    StepPages,
    Surface,
    ToPrint,
    VersionPage,
)

__all__ = ["SURFACE", "dashboard_of"]

SCREEN_REPORT = "report.html"  # standalone: its styles inline, its charts inline SVG
HTML = "text/html; charset=utf-8"


def _page(version: ArtefactVersion) -> dict[str, Any]:
    return {"screen_view": dashboard_of(version)}


def _selected(query: Mapping[str, str], context: dict[str, Any]) -> dict[str, Any]:
    """The symbol the dashboard's inspector shows (``?symbol=AAPL``)."""
    return {"selected": context["screen_view"].symbol(query.get("symbol", "").upper())}


def _files(version: ArtefactVersion) -> list[Rendered | ToPrint]:
    # The report's PDF is printed from its own HTML, off the run's path (memos.services.version_files).
    html = report_html(version)
    return [ToPrint(RENDER_PDF, html, base_url=None), Rendered(SCREEN_REPORT, HTML, html.encode())]


def _urls() -> Sequence[URLPattern]:
    from memos.pipeline.screen.desk.strategy import strategy_page
    from memos.pipeline.screen.desk.views import version_report

    return (
        path("versions/<int:version_id>/report.html", version_report, name="version_report"),
        path("screen/strategy/", strategy_page, name="screen_strategy"),
    )


def _command() -> type[BaseCommand]:
    from memos.pipeline.screen.desk.command import ScreenCommand

    return ScreenCommand


SURFACE = Surface(
    steps=StepPages(evidence=pages.evidence_ids),
    version=VersionPage(template="memos/screen/_version_screen.html", context=_page, query=_selected),
    files=Files(
        files=(
            FrozenFile(
                RENDER_PDF, "Download PDF", lambda version, stem: f"{stem}-{version.content_hash[:8]}.pdf"
            ),
            FrozenFile(
                SCREEN_REPORT,
                "The standalone HTML report",
                lambda version, stem: f"{stem}-{version.content_hash[:8]}-report.html",
            ),
        ),
        render=_files,
        # A megabyte rendered in 90 ms and stored twice (the report, the HTML its PDF is printed from): made
        # after the freeze commits, off the run's path.
        after_freeze=True,
    ),
    urls=_urls,
    ticks=(screens_due,),
    command=_command,
    week=(WEEK_PART,),
    schedules=home_schedules,
    readable=lambda version: dashboard_of(version) is not None,
)
