"""The files a frozen version is, as its workflow declares them (memos.services.surfaces.Files): a memo's or
an agency's ``render.pdf`` (the version printed, memos.services.printing), a deck's ``render.pdf`` (its
slides) and ``deck.pptx``, a screen's ``report.html`` (standalone) and its ``render.pdf`` (the report
printed): rendered once, when the version is frozen, and stored in the database with their sha256
(memos.models.VersionFile, immutable like the version). Every download, thumbnail and export serves those
bytes; nothing is rendered again, so a change of a renderer or a template never alters an old version.

Freezing renders them before its transaction (memos.services.versions.prepare) and stores them in it, so a
version is never visible without its files. A version frozen before files were kept has none: the first
reader who needs one renders them (in a render slot, memos.services.render_slots) and stores them; two
readers at once may both render, but the unique (version, name) constraint keeps the first row stored and
both serve it.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from django.db.models import QuerySet

from memos.models import ArtefactVersion, VersionFile
from memos.services import printing, surfaces
from memos.services.render_slots import release_connection, render_slot
from memos.services.surfaces import PDF, PRINTED_PAGE, RENDER_PDF, FrozenFile, Rendered, surface_for

log = logging.getLogger(__name__)

__all__ = ["NoSuchFile", "Readable", "Rendered", "StoredFile"]


class NoSuchFile(LookupError):
    """The version has no file of that name (a memo has no PPTX)."""


@dataclass(frozen=True)
class StoredFile:
    """A stored file as a download needs it before its bytes (the ETag is its sha256)."""

    pk: int
    name: str
    content_type: str
    sha256: str
    size: int


def files_of(version: ArtefactVersion) -> tuple[FrozenFile, ...]:
    """The files the version has, as its workflow declares them for content it can read."""
    return tuple(surfaces.files_of(version).files)


def names_of(version: ArtefactVersion) -> tuple[str, ...]:
    return tuple(file.name for file in files_of(version))


def file_named(version: ArtefactVersion, name: str) -> FrozenFile:
    for file in files_of(version):
        if file.name == name:
            return file
    raise NoSuchFile(f"{version.named} has no {name}")


def declared_file(kind: str, name: str) -> FrozenFile:
    """The file ``name`` as a ``kind`` workflow declares it, without reading a version's content (a download
    needs only its file name); the printed page for a version whose content this code could not read."""
    for file in (*surface_for(kind).files.files, PRINTED_PAGE):
        if file.name == name:
            return file
    raise NoSuchFile(f"a {kind} has no {name}")


class _RenderClock:
    """Seconds this process has spent rendering versions' files, for the benchmarks (bench_run's render_s)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds = 0.0

    def add(self, seconds: float) -> None:
        with self._lock:
            self._seconds += seconds

    def read(self) -> float:
        with self._lock:
            return self._seconds


_CLOCK = _RenderClock()


def render_seconds() -> float:
    """The seconds this process has spent in ``render_files`` so far."""
    return _CLOCK.read()


def render_files(version: ArtefactVersion) -> list[Rendered]:
    """Every file of the version, rendered now from the version alone (it may be one freezing has prepared and
    not stored yet): no database read but the version's brief and company, which the caller has loaded."""
    started = time.perf_counter()
    try:
        return _render_files(version)
    finally:
        _CLOCK.add(time.perf_counter() - started)


def _render_files(version: ArtefactVersion) -> list[Rendered]:
    render = surfaces.files_of(version).render
    if render is None:  # the printed page, every workflow's file unless it declares its own
        rendered = [Rendered(RENDER_PDF, PDF, printing.print_page(version))]
    else:
        rendered = render(version)
    made, declared = sorted(file.name for file in rendered), sorted(names_of(version))
    if made != declared:  # a workflow's renderer and its declaration disagree: a bug, caught at the freeze
        raise RuntimeError(f"rendering {version.kind} made {made}, but its workflow declares {declared}")
    return rendered


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
    file_named(version, name)  # NoSuchFile when the version has no file of that name
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
