"""Pages under load: 50 signed-in users asking for one page once a second each, for 30 s, page by page.

The home page, a finished full run's page and its memo document, served by the real web server
(``agency.serve``, the command scripts/run.sh runs; ``BENCH_SERVER=daphne`` for a single Daphne process) over
the bundled snapshot, each page twice: its users asking each at a moment of their own (staggered), then all
in the same instant of each second (a burst). It prints p50, p95, the requests served per second and the
errors of each page, the app's own share of each answer as the server's ``Server-Timing`` gives it
(memos.server_timing: p50 and p95 of its wall, p95 of its CPU), and where the machine's CPU went
meanwhile; it never asserts a timing.

Each user is an OS thread with a keep-alive connection of its own (``http.client``) that asks at a moment of
its own in every second (a random phase), and waits for the answer before the next; the time is from the
request's first byte to the answer's last. Locust 2.47 was tried first and dropped: on this machine, against
the same server at the same rate, its users (gevent, one or four processes) waited 250-300 ms more per page
than these threads did, and the server saw those requests take as long; the cause was not found.

``BENCH_USERS`` and ``BENCH_SECONDS`` change the load (50 and 30 by default).

``test_bench_run_page_while_readers_download_pdfs`` measures the run page alone, then again while
``BENCH_READERS`` (50) other signed-in readers download the run's frozen version's PDF
(``/versions/<id>/pdf/``) once a second each, all in the same instant (a burst, as when a notice goes out;
``BENCH_READERS_BURST=0``: each at a moment of its own): the run page's p50 and p95 with and without the
downloads, and the downloads' own.
"""

from __future__ import annotations

import http.client
import os
import random
import threading
import time
import urllib.request
from dataclasses import dataclass, field

import pytest

from memos.models import ArtefactVersion
from tests.bench.conftest import BenchReport
from tests.bench.live_desk import (
    CpuShare,
    Server,
    load_desk,
    percentile,
    postgres_pid,
    running_server,
    server_label,
    session_cookies,
)

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]

USERS = int(os.environ.get("BENCH_USERS", "50"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "30"))
READERS = int(os.environ.get("BENCH_READERS", "50"))
# 1: every reader asks in the same instant of each second (a burst, as when a notice goes out); 0: each at a
# moment of its own, like the page's users.
READERS_BURST = os.environ.get("BENCH_READERS_BURST", "1") == "1"
WARM_UP_REQUESTS = 20
TIMEOUT_S = 30.0


def warm_up(url: str, cookie: str, *, requests: int = WARM_UP_REQUESTS) -> None:
    """Every worker process compiles its templates and opens its connections before the clock starts."""
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={cookie}"})
    for _ in range(requests):
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:  # loopback only
            answer.read()


@dataclass
class Answers:
    times_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # What the server's Server-Timing said of each answer (memos.server_timing): the app's wall and CPU.
    app_ms: list[float] = field(default_factory=list)
    app_cpu_ms: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, elapsed_ms: float, error: str = "", timing: str | None = None) -> None:
        durations = _durations(timing or "")
        with self.lock:
            self.times_ms.append(elapsed_ms)
            if error:
                self.errors.append(error)
            if "app" in durations and "cpu" in durations:
                self.app_ms.append(durations["app"])
                self.app_cpu_ms.append(durations["cpu"])


def _durations(header: str) -> dict[str, float]:
    """``app;dur=12.3, cpu;dur=8.1`` -> {"app": 12.3, "cpu": 8.1}."""
    found = {}
    for metric in header.split(","):
        name, _, duration = metric.strip().partition(";dur=")
        try:
            found[name] = float(duration)
        except ValueError:
            continue
    return found


def browse(
    server: Server,
    path: str,
    marker: bytes,
    cookie: str,
    until: float,
    answers: Answers,
    phase: float | None = None,
) -> None:
    """One signed-in person asking for ``path`` once a second until ``until`` (monotonic), at a random moment
    of each second, or ``phase`` seconds into it (the same for everyone: a burst)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT_S)
    headers = {"Cookie": f"sessionid={cookie}"}
    due = time.monotonic() + (random.random() if phase is None else phase)  # a phase, not a secret
    while due < until and time.monotonic() < until:  # a server that falls behind gets fewer requests
        time.sleep(max(0.0, due - time.monotonic()))
        started = time.perf_counter()
        timing = None
        try:
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            body = answer.read()
            timing = answer.getheader("Server-Timing")
            error = "" if answer.status == 200 and marker in body else f"HTTP {answer.status}"
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"
            connection.close()  # reconnects on the next request
        answers.add((time.perf_counter() - started) * 1000, error, timing)
        due += 1.0
    connection.close()


@dataclass(frozen=True)
class Crowd:
    """People asking for one page: its path, a marker its answer must hold, their sessions, their phase."""

    path: str
    marker: str
    cookies: list[str]
    phase: float | None = None  # None: each at a random moment of the second


def load_together(server: Server, crowds: list[Crowd]) -> list[dict[str, object]]:
    """Every crowd asking for its page at once for ``SECONDS``; the numbers of each, in order."""
    until = time.monotonic() + SECONDS
    answers = [Answers() for _ in crowds]
    users = [
        threading.Thread(
            target=browse,
            args=(server, crowd.path, crowd.marker.encode(), cookie, until, answered, crowd.phase),
        )
        for crowd, answered in zip(crowds, answers, strict=True)
        for cookie in crowd.cookies
    ]
    with CpuShare({"server": server.pid, "postgres": postgres_pid()}) as cpu:
        for user in users:
            user.start()
        for user in users:
            user.join()
    return [_numbers(answered, cpu.shares) for answered in answers]


def _numbers(answers: Answers, cpu: dict[str, int]) -> dict[str, object]:
    times = answers.times_ms
    return {
        "requests": len(times),
        "per_s": round(len(times) / SECONDS, 1),
        "p50_ms": round(percentile(times, 0.50), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "max_ms": round(max(times), 1),
        # The app's share (Server-Timing): what is left of p95 is the server's queue and the client's.
        "app_p50_ms": round(percentile(answers.app_ms, 0.50), 1) if answers.app_ms else None,
        "app_p95_ms": round(percentile(answers.app_ms, 0.95), 1) if answers.app_ms else None,
        "app_cpu_p95_ms": round(percentile(answers.app_cpu_ms, 0.95), 1) if answers.app_cpu_ms else None,
        "errors": len(answers.errors),
        "first_error": answers.errors[0] if answers.errors else "",
        # percent of one core over the measurement; the load generator's threads count in rest_of_machine
        "cpu": cpu,
    }


def test_bench_pages_under_load(bench_report: BenchReport) -> None:
    desk = load_desk()
    cookies = session_cookies(desk.user, USERS)
    pages = {
        "home": ("/", 'id="your-runs"'),
        "facts": ("/facts/", 'id="fact-store"'),
        "run": (f"/runs/{desk.run.pk}/", 'id="pipeline"'),
        "memo": (f"/runs/{desk.run.pk}/steps/{desk.memo.pk}/", "doc-memo"),
    }
    with running_server() as server:
        for path, _ in pages.values():
            warm_up(server.url + path, cookies[0])
        for name, (path, marker) in pages.items():
            # Each at a moment of their own, then all in the same instant of each second (a burst).
            for arrival, phase in (("staggered", None), ("burst", 0.5)):
                [numbers] = load_together(server, [Crowd(path, marker, cookies, phase)])
                bench_report.add(
                    f"{name} page, {USERS} users x 1 req/s for {SECONDS} s, {arrival} ({server_label()})",
                    **numbers,
                )


def test_bench_run_page_while_readers_download_pdfs(bench_report: BenchReport) -> None:
    desk = load_desk()
    version = ArtefactVersion.objects.get(run=desk.run)
    cookies = session_cookies(desk.user, USERS + READERS)
    users, readers = cookies[:USERS], cookies[USERS:]
    run_page = Crowd(f"/runs/{desk.run.pk}/", 'id="pipeline"', users)
    pdf = Crowd(f"/versions/{version.pk}/pdf/", "%PDF-", readers, phase=0.0 if READERS_BURST else None)
    when = "in the same instant" if READERS_BURST else "each at a moment of its own"
    label = f"{USERS} users x 1 req/s for {SECONDS} s ({server_label()})"
    with running_server() as server:
        warm_up(server.url + run_page.path, users[0])
        warm_up(server.url + pdf.path, readers[0], requests=4)
        (alone,) = load_together(server, [run_page])
        bench_report.add(f"run page alone, {label}", **alone)
        beside, downloads = load_together(server, [run_page, pdf])
        bench_report.add(f"run page while {READERS} readers download a version's PDF, {label}", **beside)
        bench_report.add(f"version PDF, {READERS} readers x 1 req/s {when}", **downloads)
