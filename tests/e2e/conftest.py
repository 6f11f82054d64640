"""Real processes for browser tests: the web server and the RQ worker scripts/run.sh starts, the fake LLM
server on loopback, and Chromium.

The web server is ``python -m agency.serve`` (uvicorn) with two processes, so a page and its live socket may
be served by different ones, as in production; its log names the process of every page and socket it
served (tests/e2e/server_settings.py). Each process is started on a free 127.0.0.1 port with an environment
pointed at pytest-django's test database, recorded by PID, and stopped by that PID (the web server's
processes by their session). The server and the worker run with Django's async-safety guard on: only this
test process switches it off, for itself. Browser tests run in their own pytest process (``pytest -m
e2e``): Playwright's sync API runs an event loop that the default suite's async tests must not meet.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings
from django.db import connection
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from agents.llm.fakes.server import FakeLLMServer
from memos.models import Brief, Company, Run
from memos.pipeline.memo.rehearsal import script_for_run
from memos.pipeline.memo.settings import memo_settings
from memos.pipeline.registry import fake_answers
from tests.conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
# FIELD-NOTES: Debian's Chromium, never `playwright install`; no sandbox, GPU or background traffic.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "var" / "e2e"
# Playwright's sync API keeps an event loop running in the test's thread, where Django refuses ORM calls
# unless this is set. It is set for this process alone: the desk's processes must run with the guard on.
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
# Two processes, as scripts/run.sh runs several: a page and its socket can land in different ones.
WEB_WORKERS = 2
SERVER_SETTINGS = "tests.e2e.server_settings"
# How the desk's processes name their database sessions (libpq reads PGAPPNAME), to wait for their end.
DESK_APPLICATION = "analyst-desk-e2e"
# A Redis database of its own, so a worker from another test run never takes this run's jobs (or the reverse).
E2E_REDIS_DB = 14
START_TIMEOUT_S = 30.0
DESK_WORKER = "memos.pipeline.worker.DeskWorker"
STOP_TIMEOUT_S = 10.0
RUN_PAGE = re.compile(r"/runs/[0-9a-f-]{36}/$")
T = TypeVar("T")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def e2e_redis_url() -> str:
    parts = urlsplit(settings.REDIS_URL)
    return urlunsplit(parts._replace(path=f"/{E2E_REDIS_DB}"))


@dataclass
class Process:
    """A child process we started, with its log file; ``stop`` signals exactly this PID."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.popen.poll() is None:
            # SIGTERM asks RQ for a warm shutdown (finish the job) and uvicorn's supervisor to stop its
            # workers; a second SIGTERM makes RQ cold-stop its work-horse; SIGKILL only if neither listened.
            for signal_it in (self.popen.terminate, self.popen.terminate, self.popen.kill):
                signal_it()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(timeout=STOP_TIMEOUT_S)
                    break
        # Started in a session of its own: whatever it left behind (a server process, a work-horse) ends with
        # it. Its process group is ours alone, so this signals nothing we did not start.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


@dataclass
class Desk:
    """The running desk: its URL, the environment its processes share, and the processes themselves."""

    port: int
    env: dict[str, str]
    llm: FakeLLMServer
    processes: list[Process] = field(default_factory=list)
    server: Process | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> Process:
        log = SCREENSHOTS / f"{name}.log"
        with log.open("ab") as sink:
            popen = subprocess.Popen(
                list(args),
                cwd=ROOT,
                env={**self.env, **(env or {})},
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def start_server(self) -> None:
        """The web server scripts/run.sh starts, with ``WEB_WORKERS`` processes; back once each of them has
        loaded the application (a page or a socket may land in any one of them)."""
        began = self.log_mark()
        self.server = self.start(
            "server",
            sys.executable,
            "-m",
            "agency.serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            env={"DJANGO_SETTINGS_MODULE": SERVER_SETTINGS, "WEB_WORKERS": str(WEB_WORKERS)},
        )
        _wait_for_port(self.server, self.port)
        pids = _wait_for(
            lambda: found if len(found := self.server_pids(began)) == WEB_WORKERS else None,
            what=f"{WEB_WORKERS} server processes to load the application",
            process=self.server,
        )
        for pid in [self.server.pid, *pids]:
            assert_async_guard_on(pid, f"server process {pid}")

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
            _wait_for_database_sessions_to_end()

    def start_worker(self) -> Process:
        # The worker run.sh runs: it imports the pipeline and builds its clients before it forks. It takes
        # people's runs first, then the desk's scheduled work (as run.sh's SCHEDULED_WORKERS do).
        worker = self.start(
            "rqworker",
            sys.executable,
            "manage.py",
            "rqworker",
            "default",
            "scheduled",
            "--worker-class",
            DESK_WORKER,
        )
        assert_async_guard_on(worker.pid, "the RQ worker")
        return worker

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        _wait_for_database_sessions_to_end()

    # What the server's log says it served (tests/e2e/server_settings.py names the process on each line).

    def log_mark(self) -> int:
        """Where the server's log ends now: ``served(since=...)`` reads only what comes after."""
        log = SCREENSHOTS / "server.log"
        return log.stat().st_size if log.exists() else 0

    def served(self, since: int = 0) -> list[Served]:
        log = SCREENSHOTS / "server.log"
        if not log.exists():
            return []
        with log.open("rb") as text:
            text.seek(since)
            lines = text.read().decode(errors="replace").splitlines()
        return [
            Served(int(found["pid"]), found["request"]) for line in lines if (found := SERVED.search(line))
        ]

    def server_pids(self, since: int = 0) -> set[int]:
        """The server processes that started (and loaded the application) after ``since``."""
        log = SCREENSHOTS / "server.log"
        if not log.exists():
            return set()
        with log.open("rb") as text:
            text.seek(since)
            return {int(pid) for pid in STARTED.findall(text.read().decode(errors="replace"))}


@dataclass(frozen=True)
class Served:
    """One line of the server's log: which process answered a request (``GET /runs/… HTTP/1.1``) or
    accepted a socket (``WebSocket /ws/runs/…/``)."""

    pid: int
    request: str


# "2026-11-26 22:50:53,601 pid=10396 INFO uvicorn.access: 127.0.0.1:49144 - "GET /… HTTP/1.1" 200" and
# "… pid=10395 INFO uvicorn.error: 127.0.0.1:49150 - "WebSocket /ws/runs/…/" [accepted]"
SERVED = re.compile(
    r' pid=(?P<pid>\d+) INFO uvicorn\.(?:access|error): \S+ - "(?P<request>[^"]+)" (?:\[accepted\]|\d+)'
)
STARTED = re.compile(r" pid=(\d+) INFO uvicorn\.error: Started server process \[\1\]")


def assert_async_guard_on(pid: int, what: str) -> None:
    """``pid`` started without the switch that turns Django's async-safety guard off (read from the
    process's own environment, as the kernel keeps it)."""
    try:
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except FileNotFoundError:
        pytest.fail(f"{what} (pid {pid}) is gone")
    leaked = [entry for entry in environment if entry.startswith(ASYNC_UNSAFE.encode() + b"=")]
    assert not leaked, f"{what} runs with Django's async-safety guard off: {leaked}"


def _wait_for(check: Callable[[], T | None], *, what: str, process: Process) -> T:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if found := check():
            return found
        if process.popen.poll() is not None:
            pytest.fail(f"{process.name} exited with {process.popen.returncode}:\n{process.output()}")
        time.sleep(0.1)
    pytest.fail(f"timed out after {START_TIMEOUT_S:.0f} s waiting for {what}:\n{process.output()}")


def _wait_for_port(process: Process, port: int) -> None:
    def listening() -> bool | None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
        return None

    _wait_for(listening, what=f"{process.name} to listen on {port}", process=process)


def _wait_for_database_sessions_to_end() -> None:
    """A stopped server's pooled connections end a moment after its processes; the test database is
    flushed and, at the end, dropped: only once they have ended."""
    deadline = time.monotonic() + STOP_TIMEOUT_S
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [DESK_APPLICATION]
            )
            row = cursor.fetchone()
            if row is None or row[0] == 0:
                return
            if time.monotonic() > deadline:
                pytest.fail(f"{row[0]} database sessions outlived the desk's processes")
            time.sleep(0.05)


def _desk_env(llm: FakeLLMServer) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **{name: value for name, value in os.environ.items() if name != ASYNC_UNSAFE},
        # pytest-django's test database, which this (transactional) test commits to.
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": e2e_redis_url(),
        "LLM_BASE_URL": llm.url,
        "LLM_API_KEY": "x",
        "LLM_MODEL": "fake-synthesizer",
        "LLM_MODEL_EVALUATOR": "fake-evaluator",
        "LLM_LOOPBACK_ONLY": "true",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECRET_KEY": "e2e-only-secret-key-not-used-anywhere-else-0123456789",
        "DJANGO_DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
        # A worker prints its versions' PDFs as in production: after the run is finished and its claim
        # closed, on its printer thread (memos.services.version_files), never between the two.
        "PRINT_INLINE": "false",
        "PGAPPNAME": DESK_APPLICATION,
    }


def quick_script(company: Company) -> dict[str, list[object]]:
    """Answers for a quick run of ``company``, shaped like a careful model's (see the rehearsal module)."""
    quick = memo_settings().profiles["quick"]
    return script_for_run(Run(brief=Brief(company=company), config=quick.config().model_dump()))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls are sync code.
    # Never passed on to the desk's processes (_desk_env leaves it out).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ASYNC_UNSAFE, "true")
        playwright: Playwright
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()


@pytest.fixture
def desk_factory(transactional_db: None) -> Iterator[list[Desk]]:
    """Started desks, stopped (by PID) after the test, before the test database is flushed."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    redis.Redis.from_url(e2e_redis_url()).flushdb()  # this database number is the e2e run's alone
    desks: list[Desk] = []
    yield desks
    for desk in desks:
        desk.stop_all()
        desk.llm.stop()


def start_desk(
    desks: list[Desk],
    script: dict[str, list[object]],
    *,
    latency_ms: float,
    env: Mapping[str, str] | None = None,
) -> Desk:
    """The fake LLM server in this process and the web server in processes of its own; the worker is
    started by the test.
    ``env`` adds to the desk's environment (a test's mail server: EMAIL_HOST and EMAIL_PORT)."""
    llm = FakeLLMServer(latency_ms=latency_ms, script=script, answers=fake_answers()).start()
    port = free_port()
    # The links in notices point at this desk, as SITE_URL says on a real one.
    extra = {"SITE_URL": f"http://127.0.0.1:{port}", **(env or {})}
    desk = Desk(port=port, env=_desk_env(llm) | extra, llm=llm)
    desks.append(desk)
    for log in SCREENSHOTS.glob("*.log"):
        log.unlink()
    desk.start_server()
    return desk


def start_from_form(page: Page, *, ticker: str, question: str, workflow: str, profile: str) -> None:
    """Start a run through the brief form, as an analyst does, from a page where the person is logged in;
    back on the new run's page."""
    page.get_by_role("link", name="New brief").click()
    page.fill("input[name=ticker]", ticker)
    page.fill("textarea[name=question]", question)
    page.check(f"input[name=workflow][value={workflow}]")
    page.check(f"input[name=profile][value={profile}]")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(RUN_PAGE)
