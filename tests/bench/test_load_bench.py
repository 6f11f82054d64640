"""Pages under load: 50 signed-in users asking for one page once a second each, for 30 s, page by page.

The home page, a finished full run's page and its memo document, served by the real web server
(``agency.serve``, the command scripts/run.sh runs; ``BENCH_SERVER=daphne`` for a single Daphne process) over
the bundled snapshot. It prints p50, p95, the requests served per second and the errors of each page, and
where the machine's CPU went meanwhile; it never asserts a timing.

Each user is an OS thread with a keep-alive connection of its own (``http.client``) that asks at a moment of
its own in every second (a random phase), and waits for the answer before the next; the time is from the
request's first byte to the answer's last. Locust 2.47 was tried first and dropped: on this machine, against
the same server at the same rate, its users (gevent, one or four processes) waited 250-300 ms more per page
than these threads did, and the server saw those requests take as long; the cause was not found.

``BENCH_USERS`` and ``BENCH_SECONDS`` change the load (50 and 30 by default).
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
WARM_UP_REQUESTS = 20
TIMEOUT_S = 30.0


def warm_up(url: str, cookie: str) -> None:
    """Every worker process compiles its templates and opens its connections before the clock starts."""
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={cookie}"})
    for _ in range(WARM_UP_REQUESTS):
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:  # loopback only
            answer.read()


@dataclass
class Answers:
    times_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, elapsed_ms: float, error: str = "") -> None:
        with self.lock:
            self.times_ms.append(elapsed_ms)
            if error:
                self.errors.append(error)


def browse(server: Server, path: str, marker: bytes, cookie: str, until: float, answers: Answers) -> None:
    """One signed-in person asking for ``path`` once a second until ``until`` (monotonic)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT_S)
    headers = {"Cookie": f"sessionid={cookie}"}
    due = time.monotonic() + random.random()  # a phase, not a secret
    while due < until and time.monotonic() < until:  # a server that falls behind gets fewer requests
        time.sleep(max(0.0, due - time.monotonic()))
        started = time.perf_counter()
        try:
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            body = answer.read()
            error = "" if answer.status == 200 and marker in body else f"HTTP {answer.status}"
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"
            connection.close()  # reconnects on the next request
        answers.add((time.perf_counter() - started) * 1000, error)
        due += 1.0
    connection.close()


def load(server: Server, path: str, marker: str, cookies: list[str]) -> dict[str, object]:
    answers = Answers()
    until = time.monotonic() + SECONDS
    users = [
        threading.Thread(target=browse, args=(server, path, marker.encode(), cookie, until, answers))
        for cookie in cookies
    ]
    with CpuShare({"server": server.pid, "postgres": postgres_pid()}) as cpu:
        for user in users:
            user.start()
        for user in users:
            user.join()
    times = answers.times_ms
    return {
        "requests": len(times),
        "per_s": round(len(times) / SECONDS, 1),
        "p50_ms": round(percentile(times, 0.50), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "max_ms": round(max(times), 1),
        "errors": len(answers.errors),
        # percent of one core over the measurement; the load generator's threads count in rest_of_machine
        "cpu": cpu.shares,
    }


def test_bench_pages_under_load(bench_report: BenchReport) -> None:
    desk = load_desk()
    cookies = session_cookies(desk.user, USERS)
    pages = {
        "home": ("/", "Fact store"),
        "run": (f"/runs/{desk.run.pk}/", 'id="pipeline"'),
        "memo": (f"/runs/{desk.run.pk}/steps/{desk.memo.pk}/", "doc-memo"),
    }
    with running_server() as server:
        for path, _ in pages.values():
            warm_up(server.url + path, cookies[0])
        for name, (path, marker) in pages.items():
            numbers = load(server, path, marker, cookies)
            bench_report.add(
                f"{name} page, {USERS} users x 1 req/s for {SECONDS} s ({server_label()})", **numbers
            )
