"""The print server: a page printed in a process of its own reads as one printed here; an asker whose
server is gone prints itself; an answer left by a killed asker is dropped with its files; the server ends
when no one holds its pipe, and is never forked beside another thread; the spool a killed server left is
removed at the next start."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pypdf import PdfReader

from agents.render import pdf, print_server
from agents.render.print_server import PrintFailed, PrintServer

PAGE = """<html><head><style>@page { size: A6; } h1 { break-after: page; }</style></head>
<body><h1>Quarterly margin</h1><p>Services carry the margin through the cycle.</p>
<img src="/static/missing.png"><img src="file:///etc/passwd"></body></html>"""
BASE = "https://desk.invalid/"


def text_of(body: bytes) -> str:
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(body)).pages)


def ended(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already
            return True
        if done:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def server() -> Iterator[PrintServer]:
    # pytest's own threads run here; the server's child only ever runs WeasyPrint.
    started = print_server.start(only_thread=False)
    assert started is not None
    yield started
    print_server.stop()
    if not ended(started.pid):
        os.kill(started.pid, signal.SIGKILL)
        ended(started.pid)


def test_a_page_printed_by_the_server_reads_as_one_printed_here(
    server: PrintServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = pdf.html_to_pdf(PAGE, base_url=BASE, static_root=tmp_path)

    def not_here(*_: object, **__: object) -> None:
        raise AssertionError("printed in the asking process")

    monkeypatch.setattr(pdf, "html_to_pdf", not_here)  # the server was forked before: it has the real one
    there = server.render(PAGE, base_url=BASE, static_root=tmp_path)
    assert there is not None and there.pdf.startswith(b"%PDF")
    assert (
        text_of(there.pdf)
        == text_of(here.pdf)
        == "Quarterly margin Services carry the margin through the cycle."
    )
    assert (
        (there.pages, there.refused, there.missing)
        == (here.pages, here.refused, here.missing)
        == (
            2,
            ("file:///etc/passwd",),
            ("https://desk.invalid/static/missing.png",),
        )
    )
    assert [path.name for path in server.spool.iterdir()] == [print_server.PID_FILE]  # its files removed


def test_what_weasyprint_refuses_in_the_server_is_said_as_its_error(
    server: PrintServer, tmp_path: Path
) -> None:
    with pytest.raises(PrintFailed, match="base_url must be an http"):
        server.render(PAGE, base_url="ftp://desk.invalid/", static_root=tmp_path)
    assert server.render(PAGE, base_url=BASE, static_root=tmp_path) is not None  # and it goes on


def test_an_asker_that_will_not_wait_is_told_when_the_server_is_busy(
    server: PrintServer, tmp_path: Path
) -> None:
    with server.asking:  # another thread's print is with the server
        assert server.render(PAGE, base_url=BASE, static_root=tmp_path, wait=False) is None
    assert server.render(PAGE, base_url=BASE, static_root=tmp_path, wait=False) is not None


def test_an_asker_whose_server_is_gone_is_told_to_print_itself(server: PrintServer, tmp_path: Path) -> None:
    os.kill(server.pid, signal.SIGKILL)
    assert ended(server.pid)
    assert server.render(PAGE, base_url=BASE, static_root=tmp_path) is None
    assert print_server.running() is None  # and every later print is this process's
    shutil.rmtree(server.spool)  # a killed server cannot remove it itself


def test_an_answer_left_by_a_killed_asker_is_dropped_with_its_files(
    server: PrintServer, tmp_path: Path
) -> None:
    # A work-horse asked, then was killed before it read the answer.
    (server.spool / "killed.html").write_text(PAGE.replace("Quarterly", "Stale"), encoding="utf-8")
    ask = {"id": "killed", "base_url": BASE, "static_root": str(tmp_path)}
    os.write(server.asks, (json.dumps(ask) + "\n").encode())
    mine = server.render(PAGE, base_url=BASE, static_root=tmp_path)
    assert mine is not None and text_of(mine.pdf).startswith("Quarterly margin")
    assert [path.name for path in server.spool.iterdir()] == [print_server.PID_FILE]


def test_the_server_ends_when_no_process_holds_its_pipe(tmp_path: Path) -> None:
    started = print_server.start(only_thread=False)
    assert started is not None and started.render(PAGE, base_url=BASE, static_root=tmp_path) is not None
    print_server.stop()
    assert ended(started.pid) and not started.spool.exists()


def test_a_server_stopped_by_a_signal_leaves_no_spool_behind(tmp_path: Path) -> None:
    started = print_server.start(only_thread=False)
    assert started is not None and started.render(PAGE, base_url=BASE, static_root=tmp_path) is not None
    os.kill(started.pid, signal.SIGTERM)  # the desk stopped
    assert ended(started.pid) and not started.spool.exists()
    print_server.stop()


def test_the_server_is_never_forked_beside_another_thread() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert print_server.start() is None and print_server.running() is None
    finally:
        release.set()
        other.join()


def test_the_spools_killed_servers_left_are_removed_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this test's own /tmp
    killed = print_server.start(only_thread=False)
    assert killed is not None
    os.kill(killed.pid, signal.SIGKILL)  # a crashed worker's child: nothing ran to clean up
    assert ended(killed.pid) and killed.spool.exists()
    print_server.stop()
    live = tmp_path / f"{print_server.SPOOL_PREFIX}live"  # another worker's, whose server runs
    live.mkdir()
    (live / print_server.PID_FILE).write_text(str(os.getpid()))
    starting = tmp_path / f"{print_server.SPOOL_PREFIX}starting"  # its pid not written yet
    starting.mkdir()
    abandoned = tmp_path / f"{print_server.SPOOL_PREFIX}abandoned"  # never got a pid, hours ago
    abandoned.mkdir()
    hours_ago = time.time() - 2 * print_server.ORPHAN_AGE_S
    os.utime(abandoned, (hours_ago, hours_ago))
    unrelated = tmp_path / "print-elsewhere"
    unrelated.mkdir()

    started = print_server.start(only_thread=False)
    assert started is not None
    try:
        assert started.render(PAGE, base_url=BASE, static_root=None) is not None
        assert not killed.spool.exists() and not abandoned.exists()
        assert live.exists() and starting.exists() and unrelated.exists() and started.spool.exists()
        assert (started.spool / print_server.PID_FILE).read_text() == str(started.pid)
    finally:
        print_server.stop()
        ended(started.pid)
