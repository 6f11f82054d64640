"""agents.data.http: the User-Agent and the rate limit, checked against a real HTTP server on 127.0.0.1.

``http_fetcher`` refuses anything but HTTPS, and a local test server speaks plain HTTP, so these tests
swap ``urllib.request.urlopen`` for a shim that sends the very same Request object over plain HTTP to the
local server: headers, gzip handling and error mapping all run for real.
"""

from __future__ import annotations

import gzip
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from agents.data.http import FetchError, RateLimiter, http_fetcher

USER_AGENT = "Analyst Desk tests tests@example.org"
BODY = b'{"ok": true}'


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        Recorder.seen.append(
            {"path": self.path, **{key.lower(): value for key, value in self.headers.items()}}
        )
        if self.path == "/missing":
            self.send_error(404)
            return
        body = gzip.compress(BODY) if self.path == "/gzipped" else BODY
        self.send_response(200)
        if self.path == "/gzipped":
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def plain_http(monkeypatch: pytest.MonkeyPatch) -> None:
    real_urlopen = urllib.request.urlopen

    def urlopen(request: urllib.request.Request, timeout: float) -> Any:
        assert request.full_url.startswith("https://127.0.0.1:")  # never anywhere but the local server
        request.full_url = "http://" + request.full_url.removeprefix("https://")
        return real_urlopen(request, timeout=timeout)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)


@pytest.mark.usefixtures("plain_http")
def test_the_fetcher_declares_its_user_agent_and_accepts_gzip(server: str) -> None:
    fetch = http_fetcher(user_agent=USER_AGENT, per_second=10)
    assert fetch(f"https://{server}/plain") == BODY
    assert fetch(f"https://{server}/gzipped") == BODY  # unpacked when the server says Content-Encoding: gzip
    assert [request["user-agent"] for request in Recorder.seen] == [USER_AGENT, USER_AGENT]
    assert all(request["accept-encoding"] == "gzip" for request in Recorder.seen)


@pytest.mark.usefixtures("plain_http")
def test_the_fetcher_spaces_its_requests(server: str) -> None:
    fetch = http_fetcher(user_agent=USER_AGENT, per_second=20)
    started = time.monotonic()
    for _ in range(4):
        fetch(f"https://{server}/plain")
    # Four requests at 20 per second: at least three intervals of 50 ms between the first and the last.
    assert time.monotonic() - started >= 0.15 * 0.95
    assert len(Recorder.seen) == 4


@pytest.mark.usefixtures("plain_http")
def test_http_errors_and_unreachable_hosts_become_fetch_errors(server: str) -> None:
    fetch = http_fetcher(user_agent=USER_AGENT, per_second=10, timeout_s=5)
    with pytest.raises(FetchError, match="answered HTTP 404"):
        fetch(f"https://{server}/missing")
    with pytest.raises(FetchError, match="could not be reached"):
        fetch("https://127.0.0.1:9/nothing-listens-here")


def test_the_fetcher_refuses_plain_http_and_an_empty_user_agent() -> None:
    with pytest.raises(FetchError, match="refusing non-HTTPS URL"):
        http_fetcher(user_agent=USER_AGENT, per_second=10)("http://example.org/")
    with pytest.raises(ValueError, match="User-Agent is required"):
        http_fetcher(user_agent="  ", per_second=10)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_the_rate_limiter_spaces_calls_by_the_interval() -> None:
    clock = FakeClock()
    limiter = RateLimiter(4, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        limiter.wait()
    assert clock.sleeps == [0.25, 0.25]  # the first call goes at once


def test_the_rate_limiter_does_not_sleep_after_an_idle_spell() -> None:
    clock = FakeClock()
    limiter = RateLimiter(4, clock=clock, sleep=clock.sleep)
    limiter.wait()
    clock.now += 10
    limiter.wait()
    assert clock.sleeps == []


def test_the_rate_limiter_gives_concurrent_callers_distinct_slots() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleeps.append)
    threads = [threading.Thread(target=limiter.wait) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # The clock stands still, so five callers must wait 0, 0.1, 0.2, 0.3 and 0.4 s: no two share a slot.
    assert sorted(round(seconds, 6) for seconds in clock.sleeps) == [0.1, 0.2, 0.3, 0.4]


def test_the_rate_limiter_needs_a_positive_rate() -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)
