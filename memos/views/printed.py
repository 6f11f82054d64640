"""A frozen version printed: the version page as it stands for the version alone, rendered to PDF.

This is a memo's ``render.pdf`` (memos.services.version_files), made once when the version is frozen and
kept: it shows what was frozen (the artefact, its score and the delta against the line's version before, the
changelog, the content hash, its sources and what it was made with) and nothing that changes later or
depends on who reads it (its review status, votes, history, falsifier register, the diff a reader may see).
So one file serves every reader, for good.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from memos.models import ArtefactVersion
from memos.views.agency_versions import agency_context
from memos.views.decks import deck_context
from memos.views.frozen_text import segments
from memos.views.screen_dashboard import dashboard_of

PAGE = "memos/versions/version.html"


def artefact_context(version: ArtefactVersion) -> dict[str, Any]:
    """What the page shows of the version as frozen, the same for every reader."""
    by_id = {str(source["id"]): source for source in version.sources}
    return {
        "version": version,
        "brief": version.brief,
        "sections": [(name, segments(str(text), by_id)) for name, text in version.ordered_sections],
        "sources": version.sources,
        **deck_context(version),
        **agency_context(version),
        "screen_view": dashboard_of(version),
    }


def print_page(version: ArtefactVersion) -> bytes:
    """The version printed as a PDF (WeasyPrint, the page's print media: no forms, no live parts). It may
    read the app's static files and data URIs, nothing else (agents.render.pdf). ``version`` may be one that
    freezing has prepared but not yet stored."""
    # Imported here: WeasyPrint takes over a second to import, and only printing needs it.
    from agents.render.pdf import html_to_pdf

    html = render_to_string(PAGE, artefact_context(version) | {"printing": True})
    rendered = html_to_pdf(html, base_url=settings.SITE_URL, static_root=Path(settings.STATICFILES_DIRS[0]))
    return rendered.pdf
