"""The files a frozen version is, as its workflow declares them (memos.services.surfaces.Files): a memo's or
an agency's ``render.pdf`` (the version printed, memos.services.printing), a deck's ``render.pdf`` (its
slides) and ``deck.pptx``, a screen's ``report.html`` (standalone) and its ``render.pdf`` (the report
printed): rendered once, when the version is frozen, and stored in the database with their sha256
(memos.models.VersionFile, immutable like the version). Every download, thumbnail and export serves those
bytes; nothing is rendered again, so a change of a renderer or a template never alters an old version.

Freezing renders them before its transaction (memos.services.versions.prepare) and stores them in it. A PDF
is made there as the HTML it prints from (``ToPrint``: the printed page, a screen's report), kept with the
version (memos.models.PendingPrint) and printed off the run's path: WeasyPrint took 0.2-0.5 s of a memo's
1.2-1.5 s and 36 s of a week's 56 s on the fake server. Right after the freeze commits, this process's
printer thread prints it and stores the PDF (a worker waits for it before its work-horse exits:
``wait_for_prints``); a reader who asks before has it printed then, from the same frozen HTML, so the PDF is
the same whoever prints it. ``PRINT_INLINE`` (on under test) prints at the commit instead, in the caller.

A workflow may have all its files made after the freeze (``Files.after_freeze``: a screen's report, a
megabyte rendered in 90 ms and stored twice on the run's path): the freeze keeps a pending row for them
(``EVERY_FILE``), and the printer makes them from the frozen version right after the commit, as a reader
who asks first does.

A version frozen before files were kept has none: the first reader who needs one renders them (in a render
slot, memos.services.render_slots) and stores them; two readers at once may both render, but the unique
(version, name) constraint keeps the first row stored and both serve it.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from memos.models import ArtefactVersion, PendingPrint, VersionFile
from memos.services import printing, surfaces
from memos.services.background import ProcessThread
from memos.services.render_slots import release_connection, render_slot
from memos.services.surfaces import PDF, PRINTED_PAGE, FrozenFile, Rendered, ToPrint, surface_for

log = logging.getLogger(__name__)

__all__ = ["Made", "NoSuchFile", "Readable", "Rendered", "StoredFile", "ToPrint"]

# What rendering a version makes: a file's bytes, or a PDF's HTML to print off the run's path.
Made = Rendered | ToPrint
# A pending row that stands for every file of a version whose workflow makes them after the freeze.
EVERY_FILE = "*"


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


class _Clock:
    """Seconds this process has spent on one kind of work, for the benchmarks (render_s, print_s)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds = 0.0

    def add(self, seconds: float) -> None:
        with self._lock:
            self._seconds += seconds

    def read(self) -> float:
        with self._lock:
            return self._seconds


_RENDERING, _PRINTING = _Clock(), _Clock()


def render_seconds() -> float:
    """The seconds this process has spent in ``render_files`` so far (on a run's path when it freezes)."""
    return _RENDERING.read()


def print_seconds() -> float:
    """The seconds this process has spent printing PDFs so far (off the path, on the printer thread)."""
    return _PRINTING.read()


def files_to_freeze(version: ArtefactVersion) -> list[Made]:
    """The files freezing stores with the version (it may be one freezing has prepared and not stored yet):
    every file, rendered now, or none for a workflow whose files are made after the freeze
    (``Files.after_freeze``)."""
    return [] if _after_freeze(version) else render_files(version)


def _after_freeze(version: ArtefactVersion) -> bool:
    # As the workflow declares it, without reading the content (a screen's dashboard, 40 ms to build): a
    # version being frozen is one this code has just made.
    return surface_for(version.kind).files.after_freeze


def render_files(version: ArtefactVersion) -> list[Made]:
    """Every file of the version, rendered now from the version alone (it may be one freezing has prepared and
    not stored yet): no database read but the version's brief and company, which the caller has loaded."""
    started = time.perf_counter()
    try:
        return _render_files(version)
    finally:
        _RENDERING.add(time.perf_counter() - started)


def _render_files(version: ArtefactVersion) -> list[Made]:
    render = surfaces.files_of(version).render
    # The printed page, every workflow's file unless it declares its own.
    rendered: list[Made] = [printing.page_to_print(version)] if render is None else render(version)
    made, declared = sorted(file.name for file in rendered), sorted(names_of(version))
    if made != declared:  # a workflow's renderer and its declaration disagree: a bug, caught at the freeze
        raise RuntimeError(f"rendering {version.kind} made {made}, but its workflow declares {declared}")
    return rendered


def printed(item: ToPrint) -> Rendered:
    """The PDF ``item`` prints, now, in this thread."""
    started = time.perf_counter()
    try:
        return Rendered(
            item.name, PDF, printing.print_pdf(item.html, base_url=item.base_url, static=item.static)
        )
    finally:
        _PRINTING.add(time.perf_counter() - started)


def store(version: ArtefactVersion, files: list[Made]) -> None:
    """Keep the files of a version being frozen (call inside the freezing transaction): the bytes made, and
    each PDF's HTML to be printed once the transaction commits; for a workflow whose files are made after
    the freeze, a note (``EVERY_FILE``) that they are to be made once it commits."""
    _keep(version.pk, [file for file in files if isinstance(file, Rendered)])
    pending = [
        PendingPrint(version=version, name=f.name, html=f.html, base_url=f.base_url or "", static=f.static)
        for f in files
        if isinstance(f, ToPrint)
    ]
    if _after_freeze(version):
        pending.append(PendingPrint(version=version, name=EVERY_FILE, html=""))
    if not pending:
        return
    PendingPrint.objects.bulk_create(pending, ignore_conflicts=True)
    transaction.on_commit(lambda: _printer.submit(version.pk))


def print_pending(version_id: int) -> int:
    """Print every PDF of the version still to be printed, from the HTML frozen with it, and keep it; make
    the files of a version whose files are made after its freeze. Returns how many rows it cleared (another
    process may have printed or made a file first: its row is kept)."""
    count = 0
    for pending in PendingPrint.objects.filter(version_id=version_id).order_by("pk"):
        made = _made_after_freeze(version_id) if pending.name == EVERY_FILE else [printed(_to_print(pending))]
        _keep(version_id, made)
        PendingPrint.objects.filter(pk=pending.pk).delete()
        count += 1
    return count


def _made_after_freeze(version_id: int) -> list[Rendered]:
    """Every file of the version not stored yet, made now from the frozen version, its PDFs printed (off the
    run's path: counted with the prints)."""
    version = ArtefactVersion.objects.select_related("brief__company").get(pk=version_id)
    stored = set(VersionFile.objects.filter(version_id=version_id).values_list("name", flat=True))
    if set(names_of(version)) <= stored:  # a reader had them made first
        return []
    started = time.perf_counter()
    made = _render_files(version)
    _PRINTING.add(time.perf_counter() - started)
    return [f if isinstance(f, Rendered) else printed(f) for f in made if f.name not in stored]


def print_left_behind(*, older_than_s: float = 600.0, now: bool = False) -> int:
    """Have the PDFs printed that are still pending long after their freeze (the process that froze them was
    killed before its printer was done): on this process's printer thread, or ``now`` in this one. The
    watchdog calls it on each pass, so nothing waits for a reader to ask. Returns the versions submitted."""
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    left = PendingPrint.objects.filter(created_at__lt=cutoff).values_list("version_id", flat=True).distinct()
    versions = list(left)
    for version_id in versions:
        if now:
            print_pending(version_id)
        else:
            _printer.submit(version_id, in_background=True)
    return len(versions)


def wait_for_prints(timeout_s: float = 600.0) -> bool:
    """Wait until this process's printer has printed everything submitted so far (a worker about to exit,
    a test, a benchmark). False when it is still printing after ``timeout_s``: what is left stays pending
    and is printed when first read."""
    return _printer.wait_idle(timeout_s)


def _to_print(pending: PendingPrint) -> ToPrint:
    return ToPrint(pending.name, pending.html, base_url=pending.base_url or None, static=pending.static)


def _keep(version_id: int, files: list[Rendered]) -> None:
    """A file already stored stays as it is (the constraint ignores the second insert): what was served
    once is what is served for good."""
    VersionFile.objects.bulk_create(
        [
            VersionFile(
                version_id=version_id,
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


class _Printer:
    """This process's prints of the PDFs of the versions it froze, on its thread (memos.services.background),
    after each commit."""

    def __init__(self) -> None:
        self._thread: ProcessThread[int] = ProcessThread(
            "version-printer", _print_each, failed="printing versions' files failed; first readers print them"
        )

    def submit(self, version_id: int, *, in_background: bool = False) -> None:
        if settings.PRINT_INLINE and not in_background:
            print_pending(version_id)
            return
        self._thread.put(version_id)

    def wait_idle(self, timeout_s: float) -> bool:
        return self._thread.wait_idle(timeout_s)


def _print_each(version_ids: list[int]) -> None:
    for version_id in version_ids:
        try:
            print_pending(version_id)
        except Exception:
            # Nothing is lost: the HTML stays pending and the first reader who asks prints it.
            log.exception("printing version %s's files failed; the first reader prints them", version_id)


_printer = _Printer()


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
        pending = PendingPrint.objects.filter(version=version, name=name).first()
        release_connection()
        if pending is not None:  # frozen with its HTML, not printed yet: print what was frozen
            files = [printed(_to_print(pending))]
        else:
            # Frozen before files were kept, or by a workflow that makes them after the freeze (not yet).
            log.info("%s: making its files now, none stored yet", version)
            files = [f if isinstance(f, Rendered) else printed(f) for f in render_files(version)]
    _keep(version.pk, files)
    PendingPrint.objects.filter(version=version, name__in=[f.name for f in files]).delete()
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
