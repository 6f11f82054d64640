"""Real processes for browser tests: Daphne, an RQ worker and the fake LLM server on loopback, and Chromium.

Each process is started on a free 127.0.0.1 port with an environment pointed at pytest-django's test
database, recorded by PID, and stopped by that PID. Browser tests run in their own pytest process
(``pytest -m e2e``): Playwright's sync API runs an event loop that the default suite's async tests must
not meet.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings
from django.db import connection
from playwright.sync_api import Browser, Playwright, sync_playwright

from agents.llm.fakes.server import FakeLLMServer
from memos.models import Brief, Company, Run
from memos.pipeline.memo.rehearsal import script_for_run
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
# A Redis database of its own, so a worker from another test run never takes this run's jobs (or the reverse).
E2E_REDIS_DB = 14
START_TIMEOUT_S = 30.0
DESK_WORKER = "memos.pipeline.worker.DeskWorker"
STOP_TIMEOUT_S = 10.0


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
        if self.popen.poll() is not None:
            return
        # SIGTERM asks RQ for a warm shutdown (finish the job) and Daphne to close; a second SIGTERM makes
        # RQ cold-stop its work-horse; SIGKILL only if neither listened.
        for signal_it in (self.popen.terminate, self.popen.terminate, self.popen.kill):
            signal_it()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=STOP_TIMEOUT_S)
                return


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

    def start(self, name: str, *args: str) -> Process:
        log = SCREENSHOTS / f"{name}.log"
        with log.open("ab") as sink:
            popen = subprocess.Popen(
                list(args),
                cwd=ROOT,
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def start_server(self) -> None:
        daphne = str(Path(sys.executable).with_name("daphne"))
        self.server = self.start(
            "daphne", daphne, "-b", "127.0.0.1", "-p", str(self.port), "agency.asgi:application"
        )
        _wait_for_port(self.server, self.port)

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def start_worker(self) -> Process:
        # The worker run.sh runs: it imports the pipeline and builds its clients before it forks.
        return self.start(
            "rqworker", sys.executable, "manage.py", "rqworker", "default", "--worker-class", DESK_WORKER
        )

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            process.stop()


def _wait_for_port(process: Process, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            pytest.fail(f"{process.name} exited with {process.popen.returncode}:\n{process.output()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    pytest.fail(f"{process.name} did not listen on {port} within {START_TIMEOUT_S} s:\n{process.output()}")


def _desk_env(llm: FakeLLMServer) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
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
    }


def quick_script(company: Company) -> dict[str, list[object]]:
    """Answers for a quick run of ``company``, shaped like a careful model's (see the rehearsal module)."""
    quick = settings.MEMO_PROFILES["quick"]
    return script_for_run(Run(brief=Brief(company=company), config=quick.config().model_dump()))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls are sync code.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
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
    """The fake LLM server in this process and Daphne in its own; the worker is started by the test.
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
