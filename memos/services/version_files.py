"""The files a frozen version is: a memo's ``render.pdf`` (the version printed, memos.views.printed), a
deck's ``render.pdf`` (its slides) and ``deck.pptx``, a screen's ``report.html`` (standalone) and its
``render.pdf`` (the report printed, memos.views.screen_report): rendered once, when the version is frozen,
and stored in the database with their sha256 (memos.models.VersionFile, immutable like the version). Every
download, thumbnail and export serves those bytes; nothing is rendered again, so a change of a renderer or a
template never alters an old version.

Freezing renders them before its transaction (memos.services.versions.prepare) and stores them in it, so a
version is never visible without its files. A version frozen before files were kept has none: the first
reader who needs one renders them (in a render slot, memos.services.render_slots) and stores them; two
readers at once may both render, but the unique (version, name) constraint keeps the first row stored and
both serve it.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from django.db.models import QuerySet
from pydantic import ValidationError

from agents.deck.outputs import DeckOutput
from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from memos.models import ArtefactVersion, VersionFile
from memos.services.render_slots import release_connection, render_slot

log = logging.getLogger(__name__)

RENDER_PDF = "render.pdf"
DECK_PPTX = "deck.pptx"
SCREEN_REPORT = "report.html"  # a screen's standalone report; its render.pdf is the report printed
HTML = "text/html; charset=utf-8"
SCREEN = "screen"
PDF = "application/pdf"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
DECK = "deck"


class NoSuchFile(LookupError):
    """The version has no file of that name (a memo has no PPTX)."""


@dataclass(frozen=True)
class Rendered:
    name: str
    content_type: str
    body: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()


@dataclass(frozen=True)
class StoredFile:
    """A stored file as a download needs it before its bytes (the ETag is its sha256)."""

    pk: int
    name: str
    content_type: str
    sha256: str
    size: int


def deck_of(version: ArtefactVersion) -> DeckOutput | None:
    """A deck version's frozen output; None for another kind, or a deck this code cannot read."""
    if version.kind != DECK:
        return None
    try:
        return DeckOutput.model_validate(version.content)
    except ValidationError:
        return None


def names_of(version: ArtefactVersion) -> tuple[str, ...]:
    """The files the version has: a deck its slides and its PPTX, a screen its report and the report
    printed, any other its printed page."""
    if version.kind == SCREEN:
        return (RENDER_PDF, SCREEN_REPORT)
    return (RENDER_PDF, DECK_PPTX) if deck_of(version) is not None else (RENDER_PDF,)


def render_files(version: ArtefactVersion) -> list[Rendered]:
    """Every file of the version, rendered now from the version alone (it may be one freezing has prepared and
    not stored yet): no database read but the version's brief and company, which the caller has loaded."""
    output = deck_of(version)
    if output is not None:
        return [
            Rendered(RENDER_PDF, PDF, render_pdf(output.deck).pdf),
            Rendered(DECK_PPTX, PPTX, render_pptx(output.deck)),
        ]
    if version.kind == SCREEN:
        # Imported here: the report is the views' dashboard template, standalone.
        from memos.views.screen_report import report_html, report_pdf

        html = report_html(version)
        return [Rendered(RENDER_PDF, PDF, report_pdf(html)), Rendered(SCREEN_REPORT, HTML, html.encode())]
    # Imported here: the printed page is the version page's template, drawn through the views' deck viewer.
    from memos.views.printed import print_page

    return [Rendered(RENDER_PDF, PDF, print_page(version))]


def store(version: ArtefactVersion, files: list[Rendered]) -> None:
    """Keep the files of a stored version. A file already stored stays as it is (the constraint ignores the
    second insert): what was served once is what is served for good."""
    VersionFile.objects.bulk_create(
        [
            VersionFile(
                version=version,
                name=file.name,
                content_type=file.content_type,
                sha256=file.sha256,
                size=len(file.body),
                body=file.body,
            )
            for file in files
        ],
        ignore_conflicts=True,
    )


def file_of(version: ArtefactVersion, name: str) -> StoredFile:
    """The version's stored file ``name``, rendered and stored first if the version has none yet (frozen
    before files were kept). Raises NoSuchFile for a name the version has no file of, RenderBusy when no
    render slot came free in time."""
    found = _stored(version, name)
    if found is not None:
        return found
    if name not in names_of(version):
        raise NoSuchFile(f"{version.named} has no {name}")
    with render_slot():
        found = _stored(version, name)  # another reader of this process stored it while this one waited
        if found is not None:
            return found
        release_connection()
        log.info("%s: rendering its files, frozen before files were kept", version)
        files = render_files(version)
    store(version, files)
    stored = _stored(version, name)
    if stored is None:  # the render made no such file: a bug, not a reader's mistake
        raise RuntimeError(f"rendering {version} made no {name}")
    return stored


@dataclass(frozen=True)
class Readable:
    """A stored file as a download serves it, with what its name is made of."""

    file: StoredFile
    version: ArtefactVersion  # its number, kind, content hash, and its brief's company's ticker only
    body: bytes | None  # None when it was not asked for (the reader has it: a 304)


def readable_file(
    versions: QuerySet[ArtefactVersion], version_id: int, name: str, *, kind: str = "", body: bool = True
) -> Readable | None:
    """The stored file ``name`` of version ``version_id`` if it is among ``versions`` (those the reader may
    see) and of ``kind`` (any if empty): access, the file and its bytes in one query, the download's whole
    database work after signing in. None when the reader may not see it or its file is not stored yet."""
    rows = VersionFile.objects.filter(version__in=versions, version_id=version_id, name=name)
    if kind:
        rows = rows.filter(version__kind=kind)
    columns = ["name", "content_type", "sha256", "size", "version__number", "version__kind"]
    columns += ["version__content_hash", "version__brief__company__ticker"]
    found = rows.select_related("version__brief__company").only(*columns, *(["body"] if body else [])).first()
    if found is None:
        return None
    stored = StoredFile(
        pk=found.pk, name=found.name, content_type=found.content_type, sha256=found.sha256, size=found.size
    )
    return Readable(stored, found.version, bytes(found.body) if body else None)


def stored_files(version: ArtefactVersion) -> list[StoredFile]:
    """The version's files, backfilled if it has none yet."""
    return [file_of(version, name) for name in names_of(version)]


def body_of(file: StoredFile) -> bytes:
    body = VersionFile.objects.filter(pk=file.pk).values_list("body", flat=True).get()
    return bytes(body)


def _stored(version: ArtefactVersion, name: str) -> StoredFile | None:
    row = (
        VersionFile.objects.filter(version=version, name=name)
        .values_list("pk", "content_type", "sha256", "size")
        .first()
    )
    if row is None:
        return None
    pk, content_type, sha256, size = row
    return StoredFile(pk=pk, name=name, content_type=content_type, sha256=sha256, size=size)
