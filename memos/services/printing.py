"""A frozen version printed: the version page as it stands for the version alone, rendered to PDF.

This is the ``render.pdf`` of a version whose workflow declares no files of its own (a memo's, an agency's;
memos.services.surfaces): its HTML made when the version is frozen, printed off the run's path right after
(memos.services.version_files), and kept: it shows what was frozen (the
artefact, its score and the delta against the line's version before, the changelog, the content hash, its
sources and what it was made with) and nothing that changes later or depends on who reads it (its review
status, votes, history, the reader's panels, the diff a reader may see). So one file serves every reader,
for good.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from memos.models import ArtefactVersion
from memos.pipeline import judge_families
from memos.services.frozen_text import segments
from memos.services.surfaces import RENDER_PDF, ToPrint, version_page_of

PAGE = "memos/versions/version.html"


def artefact_context(version: ArtefactVersion) -> dict[str, Any]:
    """What the page shows of the version as frozen, the same for every reader: its text and sources, and its
    workflow's part of the page (memos.services.surfaces.VersionPage)."""
    by_id = {str(source["id"]): source for source in version.sources}
    page = version_page_of(version)
    return {
        "version": version,
        "brief": version.brief,
        "sections": [(name, segments(str(text), by_id)) for name, text in version.ordered_sections],
        "sources": version.sources,
        "artefact_template": page.template,
        "banner_template": page.banner,
        "downloads_template": page.downloads,
        "page_script": page.script,
        "verdict_checks": judge_families.stored(version.verdict_families),
        **page.context(version),
    }


def page_to_print(version: ArtefactVersion) -> ToPrint:
    """The version's page as it prints (the page's print media: no forms, no live parts), to be printed to
    PDF by ``print_pdf``. ``version`` may be one that freezing has prepared but not yet stored."""
    html = render_to_string(PAGE, artefact_context(version) | {"printing": True})
    return ToPrint(RENDER_PDF, html, base_url=settings.SITE_URL)


def print_page(version: ArtefactVersion) -> bytes:
    """The version's page printed now (a test, a reader's backfill)."""
    page = page_to_print(version)
    return print_pdf(page.html, base_url=page.base_url, static=page.static)


def print_pdf(html: str, *, base_url: str | None, static: bool) -> bytes:
    """HTML printed by WeasyPrint: by this process's print server where it has one (a worker's, forked before
    its work-horses: agents.render.print_server), else here. It may read data URIs and, where ``static``,
    the app's static files on ``base_url``'s origin; nothing else (agents.render.pdf)."""
    # Imported here: WeasyPrint takes over a second to import, and only printing needs it.
    from agents.render.print_server import pdf_of

    static_root = Path(settings.STATICFILES_DIRS[0]) if static else None
    return pdf_of(html, base_url=base_url, static_root=static_root).pdf
