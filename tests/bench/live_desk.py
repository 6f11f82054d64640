"""A desk for the page and live-update benchmarks: the bundled snapshot, finished runs, signed-in sessions and
the real web server in processes of its own on loopback, pointed at pytest-django's test database.

``BENCH_SERVER=daphne`` serves with a single Daphne process instead (the server before ``agency.serve``), so
the same benchmark measures both.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from memos.models import AgentStep, Brief, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from memos.services.snapshot import load_snapshot
from tests.conftest import ROOT
from tests.memos.pipeline_support import analyst, fake_llm, script_for

LOGS = ROOT / "var" / "bench"
START_TIMEOUT_S = 60.0
QUESTION = "Does cash generation fund the next product cycle, or is the market right to discount it?"
# The home page lists the ten newest runs: more than that, so it shows a full list.
RUNS = 12


@dataclass(frozen=True)
class DeskData:
    user: User
    run: Run
    memo: AgentStep


def load_desk() -> DeskData:
    """The bundled snapshot, one full run of the real pipeline against the fake LLM server, and copies of it
    (finished runs with the same steps) so the home page has a full list of runs."""
    load_snapshot(root=Path(settings.SNAPSHOT_DIR))
    user = analyst("ana")
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    run = start_run(brief=brief, user=user, profile="full", enqueue=False, workflow="memo")
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    steps = list(run.steps.all())
    for _ in range(RUNS - 1):
        copy = Run.objects.create(
            brief=Brief.objects.create(company=brief.company, question=brief.question, owner=user),
            created_by=user,
            status=Run.Status.DONE,
            profile=run.profile,
            config=run.config,
            data_version=run.data_version,
        )
        AgentStep.objects.bulk_create(
            AgentStep(
                run=copy,
                stage=s.stage,
                key=s.key,
                kind=s.kind,
                position=s.position,
                role=s.role,
                title=s.title,
                status=s.status,
                output=s.output,
                summary=s.summary,
                started_at=s.started_at,
                finished_at=s.finished_at,
            )
            for s in steps
        )
    return DeskData(user=user, run=run, memo=run.steps.get(key="memo"))


def session_cookies(user: User, count: int) -> list[str]:
    """``count`` sessions of ``user`` (one per simulated browser), as the session cookie's value."""
    cookies = []
    for _ in range(count):
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
    return cookies


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        "DJANGO_DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
        "SERVER_TIMING": "true",  # the app's share of each answer (memos.server_timing)
    }


def server_kind() -> str:
    kind = os.environ.get("BENCH_SERVER", "desk")
    if kind not in {"desk", "daphne"}:
        pytest.fail(f"BENCH_SERVER must be 'desk' or 'daphne', got {kind!r}")
    return kind


def server_command(port: int) -> list[str]:
    if server_kind() == "daphne":
        daphne = str(Path(sys.executable).with_name("daphne"))
        return [daphne, "-b", "127.0.0.1", "-p", str(port), "agency.asgi:application"]
    # What scripts/run.sh starts.
    return [sys.executable, "-m", "agency.serve", "--host", "127.0.0.1", "--port", str(port)]


def server_label() -> str:
    if server_kind() == "daphne":
        return "daphne x1"
    return f"uvicorn x{os.environ.get('WEB_WORKERS') or settings.WEB_WORKERS}"


@dataclass
class Server:
    url: str
    pid: int


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """The web server on a free loopback port; stopped by its PID afterwards."""
    LOGS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = LOGS / "server.log"
    with log.open("wb") as sink:
        # A session of its own: its worker processes can be ended with it, by its process group.
        process = subprocess.Popen(
            server_command(port),
            cwd=ROOT,
            env=server_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(process, port, log)
        yield Server(f"http://127.0.0.1:{port}", process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):  # a worker left behind by a killed supervisor
            os.killpg(process.pid, signal.SIGKILL)
        _wait_for_sessions_to_end()


def _wait_for_sessions_to_end(timeout_s: float = 5.0) -> None:
    """The server's pooled connections end a moment after its processes: the test database can be dropped
    only once they have."""
    deadline = time.monotonic() + timeout_s
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            row = cursor.fetchone()
            if row is None or row[0] == 0:
                return
            time.sleep(0.1)


def _wait_for(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    pytest.fail(f"the server did not listen on {port} within {START_TIMEOUT_S} s")


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` 0.95 is p95) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, round(share * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def _descendants(pid: int) -> list[int]:
    try:
        children = [
            int(c)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for c in (task / "children").read_text().split()
        ]
    except (FileNotFoundError, ProcessLookupError):
        return []
    return [pid] + [found for child in children for found in _descendants(child)]


def sockets_per_process(server_pid: int, port: int) -> list[int]:
    """How many established client connections each server process holds, most first (from /proc)."""
    established = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":  # 01: ESTABLISHED
                established.add(fields[9])  # the socket's inode
    counts = []
    for pid in _descendants(server_pid):
        held = 0
        with contextlib.suppress(FileNotFoundError, PermissionError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(FileNotFoundError):
                    target = str(fd.readlink())
                    held += target.startswith("socket:[") and target[8:-1] in established
        if held:
            counts.append(held)
    return sorted(counts, reverse=True)


# --- where the CPU went during a measurement (this machine is shared: say how busy the rest of it was)

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and its descendants, the living and the finished ones (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = [
            int(child)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    own = sum(int(value) for value in fields[11:15]) / _TICKS  # utime stime cutime cstime
    return own + sum(cpu_seconds(child) for child in children)


def machine_busy_seconds() -> float:
    """CPU time the whole machine spent busy (all cores) since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / _TICKS


def postgres_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        row = cursor.fetchone()
    return int((Path(row[0]) / "postmaster.pid").read_text().split("\n", 1)[0])


@dataclass
class CpuShare:
    """Shares of the machine's cores (100 = one core) over a measurement."""

    pids: dict[str, int]
    started: float = 0.0
    elapsed: float = 0.0
    before: dict[str, float] | None = None
    shares: dict[str, int] = field(default_factory=dict)

    def __enter__(self) -> CpuShare:
        self.started = time.monotonic()
        self.before = self._read()
        return self

    def __exit__(self, *exc: object) -> None:
        after = self._read()
        elapsed = time.monotonic() - self.started
        assert self.before is not None
        self.shares = {
            name: round(100 * (after[name] - self.before[name]) / elapsed)
            for name in after
            if name != "machine"
        }
        machine = 100 * (after["machine"] - self.before["machine"]) / elapsed
        self.shares["rest_of_machine"] = round(machine - sum(self.shares.values()))
        self.elapsed = elapsed

    def account(self, name: str, seconds: float) -> None:
        """CPU time of a process that has ended (from its rusage), taken out of the rest of the machine."""
        share = round(100 * seconds / self.elapsed)
        self.shares[name] = share
        self.shares["rest_of_machine"] -= share

    def _read(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids.items()} | {
            "machine": machine_busy_seconds()
        }
