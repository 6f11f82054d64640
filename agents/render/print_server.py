"""PDFs printed in a process of their own, so that WeasyPrint's layout never holds the interpreter lock of the
process that runs a run.

A worker's printer thread prints each frozen version's PDF while the next stage runs (memos.services.
version_files). WeasyPrint lays pages out in pure Python: on a thread of that process it takes the
interpreter lock from the run's threads for seconds, and every database, Redis or HTTP round trip of theirs
waits for it to come back. The week, which runs its parts in one work-horse, printed its screen's report and
three memos' pages beside its closer looks: 6.9 s a week at 200 ms a call, 5.0 s with the prints held back.

The server is forked once, from a process with no other thread (a worker before it forks any work-horse: a
fork while another thread runs may copy a lock that thread holds), after WeasyPrint is imported. Each ask is
one short line on one pipe and each answer one on another: no longer than ``PIPE_BUF``, so a writer killed
half-way leaves no half line. The HTML and the PDF travel as files in the server's spool folder. An answer
carries its ask's id; one that is not the asker's (asked by a work-horse killed while it waited) is dropped
with its files. The server ends when no process holds the ask pipe any longer (its parent and every
work-horse gone). An asker that finds it gone, its pipe full, or no answer by the deadline prints in its own
process instead, as before the server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import shutil
import signal
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.render.pdf import RenderedPdf

log = logging.getLogger(__name__)

DEADLINE_S = 300.0  # the longest print seen is a few seconds; past this the asker prints it itself
SPOOL_PREFIX = "analyst-desk-print-"
PID_FILE = "server.pid"  # in each spool: the server's pid, so that a later start can tell its spool is left
ORPHAN_AGE_S = 3600.0  # a spool with no pid file (its starter killed before writing it) left this long
_READ = 65536


class PrintFailed(RuntimeError):
    """WeasyPrint raised in the server; the message is its error."""


@dataclass
class PrintServer:
    pid: int
    spool: Path
    asks: int  # the write end of the ask pipe
    answers: int  # the read end of the answer pipe
    alive: bool = True
    _pending: bytes = b""
    # Held while one of this process's asks is with the server: one at a time, each answer its asker's.
    asking: threading.Lock = field(default_factory=threading.Lock)

    def render(
        self, html: str, *, base_url: str | None, static_root: Path | None, wait: bool = True
    ) -> RenderedPdf | None:
        """``html`` printed by the server (see agents.render.pdf.html_to_pdf); None when the server cannot
        take it (gone, its pipe full, too slow) or, unless ``wait``, is printing another's: the caller
        prints it itself. Raises PrintFailed when the server's WeasyPrint raised."""
        if not self.asking.acquire(blocking=wait):
            return None
        try:
            return self._render(html, base_url=base_url, static_root=static_root)
        finally:
            self.asking.release()

    def _render(self, html: str, *, base_url: str | None, static_root: Path | None) -> RenderedPdf | None:
        if not self.alive:
            return None
        ask_id = uuid.uuid4().hex
        root = str(static_root) if static_root is not None else None
        line = json.dumps({"id": ask_id, "base_url": base_url, "static_root": root})
        if len(line) + 1 > select.PIPE_BUF:
            return None
        (self.spool / f"{ask_id}.html").write_text(html, encoding="utf-8")
        try:
            os.write(self.asks, (line + "\n").encode())
        except BlockingIOError:
            _remove(self.spool, ask_id)
            return None
        except OSError:  # the server is gone (EPIPE)
            _remove(self.spool, ask_id)
            self.alive = False
            return None
        answer = self._answer(ask_id, time.monotonic() + DEADLINE_S)
        if answer is None:
            return None
        try:
            return _read_answer(self.spool, ask_id, answer)
        finally:
            _remove(self.spool, ask_id)

    def _answer(self, ask_id: str, deadline: float) -> dict[str, Any] | None:
        while True:
            while b"\n" in self._pending:
                line, self._pending = self._pending.split(b"\n", 1)
                try:
                    answer = json.loads(line)
                except ValueError:
                    log.warning("the print server answered %r; printing here from now on", line[:200])
                    self.alive = False
                    return None
                if answer.get("id") == ask_id:
                    return dict(answer)
                _remove(self.spool, str(answer.get("id", "")))  # a killed asker's: nobody will read it
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning(
                    "the print server gave no answer in %.0f s; printing in this process from now on",
                    DEADLINE_S,
                )
                self.alive = False
                return None
            ready, _, _ = select.select([self.answers], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.answers, _READ)
            if not chunk:
                log.warning(
                    "the print server (pid %s) is gone; printing in this process from now on", self.pid
                )
                self.alive = False
                return None
            self._pending += chunk


_server: PrintServer | None = None


def pdf_of(html: str, *, base_url: str | None, static_root: Path | None, wait: bool = True) -> RenderedPdf:
    """``html`` as a PDF (agents.render.pdf.html_to_pdf): by this process's print server where it has one and,
    unless ``wait``, the server is free; else here."""
    from agents.render.pdf import html_to_pdf  # looked up at each call, as a test may replace it

    server = running()
    drawn = server.render(html, base_url=base_url, static_root=static_root, wait=wait) if server else None
    return drawn if drawn is not None else html_to_pdf(html, base_url=base_url, static_root=static_root)


def running() -> PrintServer | None:
    """This process's print server, inherited or started, if it is still there."""
    return _server if _server is not None and _server.alive else None


def start(*, only_thread: bool = True) -> PrintServer | None:
    """Fork the print server (once a process tree); None where this process runs other threads and
    ``only_thread`` (a fork could copy a lock one of them holds)."""
    global _server  # noqa: PLW0603 - one server a process tree, inherited by the work-horses
    if running() is not None:
        return _server
    if only_thread and threading.active_count() > 1:
        log.info("not starting a print server: %d threads run here", threading.active_count())
        return None
    sweep_spools()
    spool = Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX))
    ask_read, ask_write = os.pipe()
    answer_read, answer_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the server: it never returns into its parent's code, whatever it raised
        status = 1
        try:
            os.close(ask_write)
            os.close(answer_read)
            _serve(ask_read, answer_write, spool)
            status = 0
        finally:
            shutil.rmtree(spool, ignore_errors=True)
            os._exit(status)
    os.close(ask_read)
    os.close(answer_write)
    (spool / PID_FILE).write_text(str(pid), encoding="ascii")
    os.set_blocking(ask_write, False)  # a server that stopped reading fills the pipe: print here instead
    _server = PrintServer(pid=pid, spool=spool, asks=ask_write, answers=answer_read)
    log.info("printing PDFs in process %s", pid)
    return _server


def stop() -> None:
    """Close this process's ends of the pipes (the server ends once every holder has): for tests."""
    global _server  # noqa: PLW0603 - see start
    if _server is None:
        return
    for fd in (_server.asks, _server.answers):
        with contextlib.suppress(OSError):
            os.close(fd)
    _server = None


def sweep_spools() -> list[Path]:
    """Remove the spool folders this user's killed servers left (SIGKILL runs no clean-up: a crashed
    worker's children, a test's); return them. A spool whose server still runs is kept, whoever's it is."""
    swept = []
    for spool in Path(tempfile.gettempdir()).glob(f"{SPOOL_PREFIX}*"):
        if _left(spool):
            shutil.rmtree(spool, ignore_errors=True)
            swept.append(spool)
    return swept


def _left(spool: Path) -> bool:
    try:
        if spool.stat().st_uid != os.getuid():
            return False
        pid = int((spool / PID_FILE).read_text(encoding="ascii"))
    except FileNotFoundError:  # no pid file yet, or the folder just went
        with contextlib.suppress(OSError):
            return time.time() - spool.stat().st_mtime > ORPHAN_AGE_S
        return False
    except (OSError, ValueError):
        return False
    return _gone(pid)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the pid is another user's process now: not ours to judge
        return False
    return False


def _serve(asks: int, answers: int, spool: Path) -> None:
    # The parent's handlers (a worker's graceful stop) are not this process's: a signal ends it, its spool
    # folder removed on the way out (start's ``finally``).
    for stopping in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(stopping, _end)
    pending = b""
    while True:
        chunk = os.read(asks, _READ)
        if not chunk:
            return  # no process holds the ask pipe any longer
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            os.write(answers, (json.dumps(_print(json.loads(line), spool)) + "\n").encode())


def _end(signum: int, _: object) -> None:
    raise SystemExit(128 + signum)


def _print(ask: dict[str, Any], spool: Path) -> dict[str, Any]:
    from agents.render.pdf import html_to_pdf

    ask_id = str(ask["id"])
    source = spool / f"{ask_id}.html"
    try:
        html = source.read_text(encoding="utf-8")
        source.unlink()
        root = Path(ask["static_root"]) if ask["static_root"] is not None else None
        rendered = html_to_pdf(html, base_url=ask["base_url"], static_root=root)
    except Exception as exc:  # noqa: BLE001 - any failure of the print is the asker's to report
        return {"id": ask_id, "error": f"{type(exc).__name__}: {exc}"[:1000]}
    (spool / f"{ask_id}.pdf").write_bytes(rendered.pdf)
    meta = {"pages": rendered.pages, "refused": rendered.refused, "missing": rendered.missing}
    (spool / f"{ask_id}.json").write_text(json.dumps(meta), encoding="utf-8")
    return {"id": ask_id}


def _read_answer(spool: Path, ask_id: str, answer: dict[str, Any]) -> RenderedPdf:
    if "error" in answer:
        raise PrintFailed(str(answer["error"]))
    meta = json.loads((spool / f"{ask_id}.json").read_text(encoding="utf-8"))
    return RenderedPdf(
        pdf=(spool / f"{ask_id}.pdf").read_bytes(),
        pages=int(meta["pages"]),
        refused=tuple(meta["refused"]),
        missing=tuple(meta["missing"]),
    )


def _remove(spool: Path, ask_id: str) -> None:
    for suffix in (".html", ".pdf", ".json"):
        (spool / f"{ask_id}{suffix}").unlink(missing_ok=True)
