"""A frozen version's files, served as they were stored when it was frozen (memos.services.version_files):
whatever its workflow declares (memos.services.surfaces.Files): a memo's printed page, a deck's slides and
PPTX, a screen's report. Nothing here renders a version again; only a version frozen before files were kept
is rendered, once, on its first download. A workflow's own download URLs (a deck's ``deck.pptx``) serve
through ``serve`` too.

Each file is sent with its sha256 as ETag: a reader who has it already gets a 304 without its bytes being
read. Access is the version page's (``visible_versions``): whoever may not see a version gets a 404.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

from memos.models import ArtefactVersion
from memos.services import version_files
from memos.services.access import visible_versions
from memos.services.render_slots import RenderBusy, release_connection
from memos.services.surfaces import RENDER_PDF
from memos.services.version_files import StoredFile
from memos.views.users import user_of

FOREVER_S = 365 * 24 * 3600


def forever(response: HttpResponse) -> HttpResponse:
    # Private: each reader's access was checked; what one reader was sent must not be served to another.
    patch_cache_control(response, private=True, max_age=FOREVER_S, immutable=True)
    return response


def unavailable(message: str) -> HttpResponse:
    response = HttpResponse(message, status=503, content_type="text/plain")
    response["Retry-After"] = "5"
    patch_cache_control(response, no_store=True)
    return response


def stem_of(version: ArtefactVersion) -> str:
    """What a downloaded file's name starts with: the brief's subject and the version ("AAPL-v2")."""
    return f"{version.brief.subject.replace(' ', '-').replace(',', '')}-{version.label}"


@require_safe
@login_required
def version_pdf(request: HttpRequest, version_id: int) -> HttpResponse:
    """The version's ``render.pdf``: a memo printed as its page shows it, a deck's slides, a screen's
    report."""
    return serve(request, version_id, RENDER_PDF)


@require_safe
@login_required
def version_file(request: HttpRequest, version_id: int, name: str) -> HttpResponse:
    """Any file the version's workflow declares, by its name (``files/deck.pptx``, ``files/report.html``)."""
    return serve(request, version_id, name)


def serve(request: HttpRequest, version_id: int, name: str, *, kind: str = "") -> HttpResponse:
    """The stored file ``name`` of a version of ``kind`` (any if empty), read with the reader's access in one
    query; a version frozen before files were kept has it rendered and stored first."""
    readers_copy = request.headers.get("If-None-Match", "")
    versions = visible_versions(user_of(request))
    found = version_files.readable_file(versions, version_id, name, kind=kind, body=not readers_copy)
    if found is not None:
        file, version, body = found.file, found.version, found.body
    else:
        try:
            version, file = _backfilled(request, version_id, name, kind=kind)
            body = None
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
        filename = version_files.declared_file(version.kind, name).filename(version, stem_of(version))
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["ETag"] = etag
    return forever(response)


def _backfilled(
    request: HttpRequest, version_id: int, name: str, *, kind: str
) -> tuple[ArtefactVersion, StoredFile]:
    readable = visible_versions(user_of(request)).select_related("brief__company")
    version = get_object_or_404(readable.filter(kind=kind) if kind else readable, pk=version_id)
    try:
        return version, version_files.file_of(version, name)
    except version_files.NoSuchFile as missing:
        raise Http404(str(missing)) from missing


def _names(sent: str, etag: str) -> bool:
    """Whether the reader's If-None-Match names this file already (so its bytes need not be read)."""
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in sent.split(",") if tag.strip())
