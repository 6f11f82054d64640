"""A frozen version's files, served as they were stored when it was frozen (memos.services.version_files):
its PDF (a memo's printed page, a deck's slides), a deck's PPTX, and its slide images, drawn from the stored
PDF. Nothing here renders a version again; only a version frozen before files were kept is rendered, once,
on its first download.

Each file is sent with its sha256 as ETag: a reader who has it already gets a 304 without its bytes being
read. Access is the version page's (``visible_versions``): whoever may not see a version gets a 404.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_safe

from memos.models import ArtefactVersion
from memos.services import deck_images, version_files
from memos.services.access import visible_versions
from memos.services.render_slots import RenderBusy
from memos.services.version_files import DECK_PPTX, RENDER_PDF
from memos.views.decks import forever, slide_response, stem_of, unavailable, version_and_deck
from memos.views.users import user_of


@require_safe
@login_required
def version_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    """The version's ``render.pdf``: a memo printed as its page shows it, a deck's slides."""
    version = get_object_or_404(
        visible_versions(user_of(request)).select_related("brief__company"), pk=version_id
    )
    name = f"{stem_of(version)}-{version.content_hash[:8]}.pdf"
    return _serve(request, version, RENDER_PDF, name)


@require_safe
@login_required
def version_deck_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    version, _ = version_and_deck(request, version_id)
    return _serve(request, version, RENDER_PDF, f"{stem_of(version)}-deck.pdf")


@require_safe
@login_required
def version_deck_pptx(request: HttpRequest, version_id: int) -> HttpResponse:
    version, _ = version_and_deck(request, version_id)
    return _serve(request, version, DECK_PPTX, f"{stem_of(version)}-deck.pptx")


@require_safe
@login_required
def version_slide(request: HttpRequest, version_id: int, number: int) -> HttpResponse:
    """Slide ``number`` as an image, rasterised from the version's stored PDF (and kept in the shared cache
    under that PDF's sha256)."""
    version, output = version_and_deck(request, version_id)
    pages = len(output.deck.slides)
    if not 1 <= number <= pages:
        raise Http404("no such slide")
    try:
        stored = version_files.file_of(version, RENDER_PDF)
    except RenderBusy as busy:
        return unavailable(f"The deck's PDF is waiting for a render: {busy}.")
    return slide_response(
        lambda: deck_images.stored_slide_png(
            stored.sha256,
            pages=pages,
            number=number,
            width_px=deck_images.THUMBNAIL_WIDTH_PX,
            pdf=lambda: version_files.body_of(stored),
        )
    )


def _serve(request: HttpRequest, version: ArtefactVersion, name: str, filename: str) -> HttpResponse:
    try:
        stored = version_files.file_of(version, name)
    except version_files.NoSuchFile as missing:
        raise Http404(str(missing)) from missing
    except RenderBusy as busy:
        return unavailable(f"This version's file is waiting for a render: {busy}.")
    etag = f'"{stored.sha256}"'
    if _has(request, etag):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(version_files.body_of(stored), content_type=stored.content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["ETag"] = etag
    return forever(response)


def _has(request: HttpRequest, etag: str) -> bool:
    """Whether the reader's If-None-Match names this file already (so its bytes need not be read)."""
    sent = request.headers.get("If-None-Match", "")
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in sent.split(",") if tag.strip())
