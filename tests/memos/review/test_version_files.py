"""A frozen version is its files: a memo's PDF rendered once when it is frozen, stored with its sha256 and
served byte for byte ever after; a version frozen before files were kept gets its PDF on first need, once,
even when two readers ask at the same moment; renders wait for a slot of their process without holding a
database connection. Real runs on the fake OpenAI-compatible server, PostgreSQL, the real web views."""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pypdf import PdfReader

from memos.models import ArtefactVersion, PendingPrint, Run, VersionFile
from memos.pipeline.workflows import Artefact
from memos.services import printing as printed
from memos.services import render_slots, version_files
from memos.services.accounts import Roles
from memos.services.surfaces import ToPrint
from memos.services.versions import content_hash, freeze, prepare, rendered_text
from tests.agents.render.serving import printing_elsewhere
from tests.memos.factories import company, run_for
from tests.memos.pipeline_support import finished_run, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)

SECTIONS = {"Headline thesis": "Services carry the margin through the cycle.", "Risk budget": "Two percent."}


def pdf_text(body: bytes) -> str:
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(body)).pages)


def old_version(run: Run) -> ArtefactVersion:
    """A memo version as a desk from before files were kept froze it: the row, and no file."""
    text = rendered_text(SECTIONS)
    content = {"memo": {"headline_thesis": SECTIONS["Headline thesis"]}}
    return ArtefactVersion.objects.create(
        brief=run.brief,
        run=run,
        number=1,
        kind="memo",
        title="AAPL memo: Is the services mix durable?",
        content=content,
        rendered_text=text,
        content_hash=content_hash("memo", content, text),
        evaluated=True,
        score=6.0,
        score_label="calibrated J+",
        sections=SECTIONS,
        changelog="first version of this brief (memo); calibrated J+ 6",
    )


@pytest.fixture
def ana() -> User:
    return person("ana", Roles.ANALYST)


@pytest.fixture
def reader(ana: User) -> Client:
    client = Client()
    client.force_login(ana)
    return client


@pytest.fixture
def old(ana: User) -> ArtefactVersion:
    return old_version(run_for(ana, company()))


def pdf_of(client: Client, version: ArtefactVersion) -> Any:
    return client.get(f"/versions/{version.pk}/pdf/")


def test_a_memo_is_frozen_with_its_pdf_rendered_outside_the_runs_transaction(
    ana: User, reader: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_desk_data("AAPL")
    rendered_in_transaction: list[bool] = []
    real = version_files.render_files

    def watched(version: ArtefactVersion) -> list[version_files.Made]:
        rendered_in_transaction.append(connection.in_atomic_block)
        return real(version)

    monkeypatch.setattr(version_files, "render_files", watched)
    version = ArtefactVersion.objects.get(run=finished_run(ana))
    assert rendered_in_transaction == [False], "the run's transaction only stores what was rendered before it"

    (file,) = VersionFile.objects.filter(version=version)
    body = bytes(file.body)
    assert (file.name, file.content_type) == ("render.pdf", "application/pdf")
    assert file.sha256 == hashlib.sha256(body).hexdigest() and file.size == len(body)
    text = pdf_text(body)
    assert version.sections["Headline thesis"].split()[0] in text and version.content_hash in text
    assert "v1" in text and "calibrated J+" in text
    # What changes later, or depends on who reads it, is not in a file that never changes.
    assert "History" not in text and "Ready for review" not in text

    response = pdf_of(reader, version)
    assert response.status_code == 200 and response.content == body
    assert response["ETag"] == f'"{file.sha256}"'
    assert response["Content-Disposition"] == f'attachment; filename="AAPL-v1-{version.content_hash[:8]}.pdf"'


def test_a_finish_retried_after_its_transaction_rolled_back_freezes_the_prepared_version_once(
    ana: User,
) -> None:
    run = run_for(ana, company(), status=Run.Status.DONE)
    artefact = Artefact(kind="memo", title="AAPL memo", content={}, sections=SECTIONS, evaluated=False)
    prepared = prepare(run=run, artefact=artefact)
    assert not ArtefactVersion.objects.exists(), "preparing writes nothing"

    class ConnectionLost(Exception):
        pass

    with pytest.raises(ConnectionLost), transaction.atomic():
        freeze(run=run, artefact=artefact, prepared=prepared)
        raise ConnectionLost  # the finish's transaction rolls back, version and files with it
    assert not ArtefactVersion.objects.exists() and not VersionFile.objects.exists()
    assert not PendingPrint.objects.exists()  # nor is anything left to print

    with transaction.atomic():
        version = freeze(run=run, artefact=artefact, prepared=prepared)
    (to_print,) = prepared.files
    assert isinstance(to_print, ToPrint) and "Services carry the margin" in to_print.html
    (file,) = VersionFile.objects.filter(version=version)  # printed from it once the finish committed
    assert version.content_hash in pdf_text(bytes(file.body))
    assert version.created_at == prepared.version.created_at and not PendingPrint.objects.exists()
    assert ArtefactVersion.objects.get().number == 1


def test_a_version_prepared_from_other_content_is_not_the_one_frozen(ana: User) -> None:
    run = run_for(ana, company(), status=Run.Status.DONE)
    prepared = prepare(
        run=run,
        artefact=Artefact(kind="memo", title="AAPL memo", content={}, sections=SECTIONS, evaluated=False),
    )
    changed = {**SECTIONS, "Headline thesis": "Services no longer carry the margin."}
    artefact = Artefact(kind="memo", title="AAPL memo", content={"n": 1}, sections=changed, evaluated=False)

    with transaction.atomic():
        version = freeze(run=run, artefact=artefact, prepared=prepared)

    assert version.content == {"n": 1} and version.content_hash != prepared.version.content_hash
    assert version.content_hash == content_hash("memo", {"n": 1}, rendered_text(changed))
    assert "no longer carry" in version.rendered_text


def test_a_large_version_is_stored_compressed_with_lz4(ana: User) -> None:
    """The desk's PostgreSQL compresses large values with lz4 (scripts/lib.sh): a screen's megabyte of
    content was written in about half the time pglz took."""
    run = run_for(ana, company(), status=Run.Status.DONE)
    content = {"rows": [f"row {n}: " + "alpha beta gamma " * 8 for n in range(2000)]}
    artefact = Artefact(kind="memo", title="AAPL memo", content=content, sections=SECTIONS, evaluated=False)
    with transaction.atomic():
        version = freeze(run=run, artefact=artefact)
    with connection.cursor() as cursor:
        table = ArtefactVersion._meta.db_table
        cursor.execute(f"SELECT pg_column_compression(content) FROM {table} WHERE id = %s", [version.pk])
        assert cursor.fetchone() == ("lz4",)
    assert ArtefactVersion.objects.get(pk=version.pk).content == content


def test_the_pdf_is_printed_off_the_runs_path_from_the_html_frozen_with_it(
    ana: User, reader: Client, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a worker does it: the run ends and its version is readable before its PDF is printed; a reader who
    asks first has it printed from the HTML frozen with the version (not from today's templates), and the
    printer's own print, later, changes nothing."""
    settings.PRINT_INLINE = False
    load_desk_data("AAPL")
    go_on = threading.Event()
    real = printed.print_pdf

    def printer_waits(html: str, **where: Any) -> bytes:
        if threading.current_thread().name == "version-printer":
            assert go_on.wait(30)
        return real(html, **where)

    monkeypatch.setattr(printed, "print_pdf", printer_waits)
    run = finished_run(ana)
    version = ArtefactVersion.objects.get(run=run)
    assert run.status == Run.Status.DONE and version.status  # finished and frozen: the PDF is still to come
    assert not VersionFile.objects.filter(version=version).exists()
    (pending,) = PendingPrint.objects.filter(version=version)
    assert pending.name == "render.pdf" and version.content_hash in pending.html

    def no_template(*_: Any, **__: Any) -> Any:
        raise AssertionError("a frozen version's PDF is printed from the HTML frozen with it")

    monkeypatch.setattr(printed, "render_to_string", no_template)
    first = pdf_of(reader, version)  # the reader does not wait for the printer
    assert first.status_code == 200 and version.content_hash in pdf_text(first.content)
    assert not PendingPrint.objects.exists()

    go_on.set()
    assert version_files.wait_for_prints(30)
    (file,) = VersionFile.objects.filter(version=version)
    assert bytes(file.body) == first.content and pdf_of(reader, version).content == first.content


def test_the_printer_prints_what_a_run_froze_once_it_committed(
    ana: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PRINT_INLINE = False
    load_desk_data("AAPL")
    threads: list[str] = []
    real = printed.print_pdf

    def watched(html: str, **where: Any) -> bytes:
        threads.append(threading.current_thread().name)
        return real(html, **where)

    monkeypatch.setattr(printed, "print_pdf", watched)
    version = ArtefactVersion.objects.get(run=finished_run(ana))
    assert version_files.wait_for_prints(60)
    assert threads == ["version-printer"]
    (file,) = VersionFile.objects.filter(version=version)
    assert version.content_hash in pdf_text(bytes(file.body)) and not PendingPrint.objects.exists()


def test_a_worker_with_a_print_server_has_the_server_print_what_a_run_froze(
    ana: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker forks its print server before anything else (memos.pipeline.worker.warm_up): the run's
    process only hands the page over and stores what comes back; WeasyPrint runs in the server."""
    settings.PRINT_INLINE = False
    load_desk_data("AAPL")
    with printing_elsewhere(monkeypatch):
        version = ArtefactVersion.objects.get(run=finished_run(ana))
        assert version_files.wait_for_prints(60)
    (file,) = VersionFile.objects.filter(version=version)
    assert version.content_hash in pdf_text(bytes(file.body)) and not PendingPrint.objects.exists()


def test_a_pdf_a_killed_worker_left_pending_is_printed_by_the_watchdog(old: ArtefactVersion) -> None:
    """The worker that froze the version died before its printer was done: the watchdog prints what was
    frozen without waiting for a reader; a print still within its worker's time is left to that worker."""
    page = printed.page_to_print(old)
    PendingPrint.objects.create(version=old, name=page.name, html=page.html, base_url=page.base_url or "")
    out = StringIO()
    call_command("watchdog", "--once", stdout=out)
    assert "printing" not in out.getvalue() and PendingPrint.objects.count() == 1  # its worker may be at it
    PendingPrint.objects.update(created_at=timezone.now() - timedelta(minutes=11))
    call_command("watchdog", "--once", stdout=out)
    assert "printing the PDFs of 1 version(s) left pending" in out.getvalue()
    (file,) = VersionFile.objects.filter(version=old)
    assert "Services carry the margin" in pdf_text(bytes(file.body)) and not PendingPrint.objects.exists()


def test_a_change_of_the_renderer_after_freezing_never_alters_the_download(
    ana: User, reader: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_desk_data("AAPL")
    version = ArtefactVersion.objects.get(run=finished_run(ana))
    before = pdf_of(reader, version).content

    def new_renderer(*_: Any, **__: Any) -> Any:
        raise AssertionError("a frozen version is never rendered again")

    monkeypatch.setattr(printed, "print_pdf", new_renderer)
    after = pdf_of(reader, version)
    assert after.status_code == 200 and after.content == before


def test_a_version_frozen_before_files_were_kept_gets_its_pdf_on_first_need_rendered_without_a_connection(
    old: ArtefactVersion, reader: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not VersionFile.objects.filter(version=old).exists()
    connected_while_rendering: list[bool] = []
    real = printed.print_pdf

    def print_pdf(html: str, **where: Any) -> bytes:
        connected_while_rendering.append(connection.connection is not None)
        return real(html, **where)

    monkeypatch.setattr(printed, "print_pdf", print_pdf)
    first = pdf_of(reader, old)
    assert first.status_code == 200 and first.content.startswith(b"%PDF-")
    assert connected_while_rendering == [False]
    assert "Services carry the margin" in pdf_text(first.content)
    stored = VersionFile.objects.get(version=old, name="render.pdf")
    assert bytes(stored.body) == first.content

    second = pdf_of(reader, old)
    assert second.content == first.content and len(connected_while_rendering) == 1, "rendered once"
    assert reader.get(f"/versions/{old.pk}/deck.pptx").status_code == 404  # a memo is no deck


def test_a_stored_file_is_served_in_one_query_after_signing_in_and_a_304_without_its_bytes(
    old: ArtefactVersion, reader: Client
) -> None:
    first = pdf_of(reader, old)  # rendered and stored: a version frozen before files were kept
    with CaptureQueriesContext(connection) as served:
        again = pdf_of(reader, old)
    ours = [query["sql"] for query in served.captured_queries if "memos_" in query["sql"]]
    assert again.content == first.content and len(served.captured_queries) == 4  # session, user, roles, file
    assert len(ours) == 1 and "memos_versionfile" in ours[0] and '"body"' in ours[0]

    etag = again["ETag"]
    with CaptureQueriesContext(connection) as revalidated:
        unchanged = reader.get(f"/versions/{old.pk}/pdf/", HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304 and unchanged["ETag"] == etag
    assert not any('"body"' in query["sql"] for query in revalidated.captured_queries)


def test_two_readers_backfilling_the_same_old_version_at_once_store_its_pdf_once(
    old: ArtefactVersion, ana: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RENDERS_PER_PROCESS = 2  # both may render at once: the database, not the slot, decides
    both_rendering = threading.Barrier(2, timeout=30)
    drawn: list[bytes] = []

    def print_pdf(html: str, **where: Any) -> bytes:
        body = f"%PDF-1.7 drawn by reader {threading.get_ident()}".encode()
        drawn.append(body)
        both_rendering.wait()  # neither stores before the other has rendered
        return body

    monkeypatch.setattr(printed, "print_pdf", print_pdf)

    def download(_: int) -> bytes:
        try:
            client = Client()
            client.force_login(ana)
            response = pdf_of(client, old)
            assert response.status_code == 200
            return bytes(response.content)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(download, range(2))
    assert len(drawn) == 2 and drawn[0] != drawn[1]
    (stored,) = VersionFile.objects.filter(version=old)
    assert first == second == bytes(stored.body) and bytes(stored.body) in drawn


@pytest.fixture
def every_slot_taken(settings: Any) -> Iterator[Callable[[], None]]:
    """This process's one render slot, held by the test until it lets go."""
    settings.RENDERS_PER_PROCESS = 1
    settings.RENDER_WAIT_SECONDS = 1
    slot = render_slots.render_slot()
    slot.__enter__()
    released = threading.Event()

    def let_go() -> None:
        if not released.is_set():
            released.set()
            slot.__exit__(None, None, None)

    yield let_go
    let_go()


def test_a_reader_who_waits_too_long_for_a_render_slot_is_told_to_come_back_and_nothing_is_stored(
    old: ArtefactVersion, reader: Client, every_slot_taken: Callable[[], None]
) -> None:
    busy = pdf_of(reader, old)
    assert busy.status_code == 503 and busy["Retry-After"] == "5"
    assert "no-store" in busy["Cache-Control"] and b"waiting for a render" in busy.content
    assert not VersionFile.objects.filter(version=old).exists()

    every_slot_taken()
    served = pdf_of(reader, old)
    assert served.status_code == 200 and served.content.startswith(b"%PDF-")


def test_a_render_slot_holds_no_database_connection_while_it_waits_or_renders() -> None:
    connection.ensure_connection()
    assert connection.connection is not None
    with render_slots.render_slot():
        assert connection.connection is None
    assert ArtefactVersion.objects.count() == 0  # and the next query connects again
