"""A screen version as a standalone HTML report (one file: its styles inline, its charts inline SVG, nothing
fetched from anywhere), which is also what its PDF is printed from. Both are made once, when the version is
frozen, and kept with it; the PDF is printed off the run's path (memos.services.version_files)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string

from memos.models import ArtefactVersion
from memos.pipeline.screen.desk.dashboard import dashboard_of

REPORT = "memos/screen/report.html"
STYLES = "css/screen-report.css"


def report_html(version: ArtefactVersion) -> str:
    dash = dashboard_of(version)
    if dash is None:
        raise ValueError(f"{version} is not a screen this code can read")
    css = (Path(settings.STATICFILES_DIRS[0]) / STYLES).read_text(encoding="utf-8")
    return render_to_string(REPORT, {"dash": dash, "version": version, "css": css})
