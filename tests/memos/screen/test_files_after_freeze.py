"""A screen's files (its standalone report, a megabyte, and that report printed) are made after its freeze
commits, from the frozen version, on the printer thread: off the run's path, as a worker does it. A reader
who asks first has them made then; a worker killed before its printer was done leaves them to the watchdog.
Real screen runs on the fake OpenAI-compatible server, PostgreSQL, the real web views."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from memos.models import ArtefactVersion, Notice, PendingPrint, Run, VersionFile
from memos.pipeline.screen.desk import dashboard as screen_dashboard
from memos.pipeline.screen.desk.report import report_html
from memos.services import version_files
from memos.services.accounts import Roles
from tests.memos.pipeline_support import person
from tests.memos.screen.test_dashboard import finished_screen

pytestmark = pytest.mark.django_db(transaction=True)

FILES = {"report.html", "render.pdf"}


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], threading.Event]]:
    """The threads the screen's files are rendered on; the printer's renders wait for the event."""
    threads: list[str] = []
    go_on = threading.Event()
    real = version_files._render_files

    def watched(version: ArtefactVersion) -> list[version_files.Made]:
        threads.append(threading.current_thread().name)
        if threading.current_thread().name == "version-printer":
            assert go_on.wait(30)
        return real(version)

    monkeypatch.setattr(version_files, "_render_files", watched)
    yield threads, go_on
    go_on.set()
    version_files.wait_for_prints(30)


def stored(version: ArtefactVersion) -> dict[str, bytes]:
    return {f.name: bytes(f.body) for f in VersionFile.objects.filter(version=version)}


def test_a_screen_s_files_are_made_after_its_freeze_on_the_printer_thread(
    settings: Any, renders: tuple[list[str], threading.Event]
) -> None:
    settings.PRINT_INLINE = False
    threads, go_on = renders
    run, version, _ = finished_screen()
    # The run has ended and its version is frozen; its files are still to come, and none was made on its path.
    assert run.status == Run.Status.DONE
    assert stored(version) == {}
    assert list(PendingPrint.objects.filter(version=version).values_list("name", "html")) == [("*", "")]

    go_on.set()
    assert version_files.wait_for_prints(60)
    assert threads == ["version-printer"]
    files = stored(version)
    assert set(files) == FILES and not PendingPrint.objects.exists()
    assert files["report.html"] == report_html(version).encode()  # made from the frozen version alone
    assert files["render.pdf"].startswith(b"%PDF")


def test_a_reader_who_asks_first_has_them_made_and_the_printer_makes_nothing_twice(
    settings: Any, renders: tuple[list[str], threading.Event]
) -> None:
    settings.PRINT_INLINE = False
    threads, go_on = renders
    _, version, client = finished_screen()
    response = client.get(f"/versions/{version.pk}/report.html")  # the reader does not wait for the printer
    assert response.status_code == 200 and response.content == report_html(version).encode()
    first = stored(version)
    assert set(first) == FILES

    go_on.set()
    assert version_files.wait_for_prints(60)
    assert stored(version) == first and VersionFile.objects.filter(version=version).count() == 2
    assert not PendingPrint.objects.exists()
    assert threads.count("version-printer") <= 1  # it found them made, or its rows were kept: never two


def test_files_a_killed_worker_left_to_make_are_made_by_the_watchdog(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PRINT_INLINE = False
    monkeypatch.setattr(version_files._printer, "submit", lambda *_, **__: None)  # died before its printer
    _, version, _ = finished_screen()
    assert stored(version) == {} and PendingPrint.objects.filter(version=version, name="*").exists()
    monkeypatch.undo()

    PendingPrint.objects.update(created_at=timezone.now() - timedelta(minutes=11))
    out = StringIO()
    call_command("watchdog", "--once", stdout=out)
    assert "left pending" in out.getvalue()
    assert set(stored(version)) == FILES and not PendingPrint.objects.exists()


def test_freezing_a_screen_builds_its_dashboard_nowhere_on_the_run_s_path(
    settings: Any, renders: tuple[list[str], threading.Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither its files (made after) nor its notices (the e-mail reads nothing of a screen's content) build
    the dashboard the run's thread would wait for: 40 ms for 87 symbols."""
    settings.PRINT_INLINE = False
    built_on: list[str] = []
    real = screen_dashboard._built

    def watched(content: dict[str, Any]) -> screen_dashboard.Dashboard | None:
        built_on.append(threading.current_thread().name)
        return real(content)

    monkeypatch.setattr(screen_dashboard, "_built", watched)
    person("rev", Roles.REVIEWER)  # who hears of the frozen screen
    _, version, _ = finished_screen()
    assert "MainThread" not in built_on, built_on
    (notice, *_) = Notice.objects.filter(version=version)
    assert version.named in notice.subject and f"/versions/{version.pk}/" in notice.body
