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
from memos.services.render_slots import RenderBusy, release_connection
from memos.services.version_files import DECK, DECK_PPTX, RENDER_PDF, SCREEN_REPORT, StoredFile
from memos.views.decks import PNG, forever, slide_response, stem_of, unavailable, version_and_deck
from memos.views.users import user_of


@require_safe
@login_required
def version_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    """The version's ``render.pdf``: a memo printed as its page shows it, a deck's slides."""
    return _serve(request, version_id, RENDER_PDF)


@require_safe
@login_required
def version_report(request: HttpRequest, version_id: int) -> HttpResponse:
    """A screen version's standalone HTML report (one file, embedding nothing from outside)."""
    return _serve(request, version_id, SCREEN_REPORT)


@require_safe
@login_required
def version_deck_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    return _serve(request, version_id, RENDER_PDF, deck=True)


@require_safe
@login_required
def version_deck_pptx(request: HttpRequest, version_id: int) -> HttpResponse:
    return _serve(request, version_id, DECK_PPTX, deck=True)


@require_safe
@login_required
def version_slide(request: HttpRequest, version_id: int, number: int) -> HttpResponse:
    """Slide ``number`` as an image, rasterised from the version's stored PDF (and kept in the shared cache
    under that PDF's sha256)."""
    width = deck_images.THUMBNAIL_WIDTH_PX
    known = version_files.readable_file(
        visible_versions(user_of(request)), version_id, RENDER_PDF, kind=DECK, body=False
    )
    if known is not None and (drawn := deck_images.stored_slide_if_drawn(known.file.sha256, number, width)):
        return forever(HttpResponse(drawn, content_type=PNG))
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
            width_px=width,
            pdf=lambda: version_files.body_of(stored),
        )
    )


def _serve(request: HttpRequest, version_id: int, name: str, *, deck: bool = False) -> HttpResponse:
    """The stored file, read with the reader's access in one query; a version frozen before files were kept
    has it rendered and stored first."""
    readers_copy = request.headers.get("If-None-Match", "")
    versions = visible_versions(user_of(request))
    found = version_files.readable_file(
        versions, version_id, name, kind=DECK if deck else "", body=not readers_copy
    )
    if found is not None:
        file, version, body = found.file, found.version, found.body
    else:
        try:
            version, file, body = _backfilled(request, version_id, name, deck=deck)
        except RenderBusy as busy:
            return unavailable(f"This version's file is waiting for a render: {busy}.")
    # Every read is done: the pooled connection goes back before the bytes go out.
    release_connection()
    etag = f'"{file.sha256}"'
    if _names(readers_copy, etag):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(
            body if body is not None else version_files.body_of(file), content_type=file.content_type
        )
        response["Content-Disposition"] = f'attachment; filename="{_filename(version, name, deck=deck)}"'
    response["ETag"] = etag
    return forever(response)


def _backfilled(
    request: HttpRequest, version_id: int, name: str, *, deck: bool
) -> tuple[ArtefactVersion, StoredFile, None]:
    if deck:
        version, _ = version_and_deck(request, version_id)
    else:
        version = get_object_or_404(
            visible_versions(user_of(request)).select_related("brief__company"), pk=version_id
        )
    try:
        return version, version_files.file_of(version, name), None
    except version_files.NoSuchFile as missing:
        raise Http404(str(missing)) from missing


def _filename(version: ArtefactVersion, name: str, *, deck: bool) -> str:
    stem = stem_of(version)
    if name == SCREEN_REPORT:
        return f"{stem}-{version.content_hash[:8]}-report.html"
    if not deck:
        return f"{stem}-{version.content_hash[:8]}.pdf"
    return f"{stem}-deck.pptx" if name == DECK_PPTX else f"{stem}-deck.pdf"


def _names(sent: str, etag: str) -> bool:
    """Whether the reader's If-None-Match names this file already (so its bytes need not be read)."""
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in sent.split(",") if tag.strip())
