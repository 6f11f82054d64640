"""agents.data.http: allow-lists, redirects, caps and the deadline, against real HTTP servers on 127.0.0.1.

The fetcher speaks HTTPS in production; here its ``connect`` seam hands it a plain TCP socket to a local
server instead of a TLS one. Everything else runs for real: URL and redirect checks, the request and its
headers, chunked reading, the size caps, gzip and the deadline's timer.
"""

from __future__ import annotations

import gzip
import re
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from agents.data.http import (
    Deadline,
    FetchError,
    RateLimiter,
    gunzip_capped,
    http_fetcher,
    public_https_connector,
    shown_url,
)

USER_AGENT = "Analyst Desk tests tests@example.org"
BODY = b'{"ok": true}'
SEC = "sec.example.test"
DATA = "data.example.test"
HOSTS = (SEC, DATA)


class Site(BaseHTTPRequestHandler):
    """One local server behind every test host name; the path says how to answer."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[dict[str, str]]] = []
    sent: ClassVar[list[int]] = []  # bytes the streaming answers managed to write before the client left
    finished = threading.Event()

    def do_GET(self) -> None:
        Site.seen.append({"path": self.path, **{key.lower(): value for key, value in self.headers.items()}})
        route = self.path.split("?", 1)[0].strip("/").split("/")
        answer: Callable[..., None] = getattr(self, f"_{route[0]}", self._missing)
        try:
            answer(*route[1:])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the fetcher hung up, which is what several tests want
        finally:
            Site.finished.set()

    def _plain(self) -> None:
        self._send(BODY)

    def _gzipped(self) -> None:
        self._send(gzip.compress(BODY), {"Content-Encoding": "gzip"})

    def _bomb(self) -> None:
        self._send(GZIP_BOMB, {"Content-Encoding": "gzip"})

    def _redirect(self, *target: str) -> None:
        self.send_response(302)
        self.send_header("Location", "/".join(target).replace("~", "://", 1))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _loop(self, number: str) -> None:
        self._redirect(f"/loop/{int(number) + 1}")

    def _endless(self) -> None:
        """No Content-Length, so only the fetcher's cap can stop it; counts what it got to write."""
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        written, chunk = 0, b"x" * 65536
        try:
            for _ in range(1024):  # 64 MiB at most
                self.wfile.write(chunk)
                written += len(chunk)
        finally:
            Site.sent.append(written)

    def _huge(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(10**9))
        self.end_headers()
        self.wfile.write(b"x" * 1024)

    def _short(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"x" * 10)

    def _drip(self, phase: str) -> None:
        """A byte every 50 ms, for ever (well, 10 s): in the headers or in the body."""
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        if phase == "body":
            self.wfile.write(b"Content-Length: 1000000\r\n\r\n")
        for _ in range(200):
            self.wfile.write(b"X-Slow: y\r\n" if phase == "headers" else b"y")
            self.wfile.flush()
            time.sleep(0.05)

    def _missing(self, *_: str) -> None:
        self.send_error(404)

    def _send(self, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


# 16 MiB of zeros packs into about 16 KB: far under the raw cap, far over the unpacked one.
GZIP_BOMB = gzip.compress(bytes(16 * 1024 * 1024), compresslevel=9)


class LocalNetwork:
    """The ``connect`` seam: every host name leads to the local server; the names asked are recorded."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.hosts: list[str] = []

    def __call__(self, host: str, deadline: Deadline) -> socket.socket:
        self.hosts.append(host)
        return socket.create_connection(("127.0.0.1", self.port), timeout=deadline.remaining())


@pytest.fixture
def network() -> Iterator[LocalNetwork]:
    Site.seen, Site.sent = [], []
    Site.finished.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield LocalNetwork(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def fetcher(network: LocalNetwork, **options: Any) -> Callable[[str], bytes]:
    settings: dict[str, Any] = {"user_agent": USER_AGENT, "per_second": 100, "allowed_hosts": HOSTS}
    return http_fetcher(connect=network, **{**settings, **options})


def test_the_fetcher_declares_its_user_agent_and_unpacks_gzip(network: LocalNetwork) -> None:
    fetch = fetcher(network)
    assert fetch(f"https://{SEC}/plain") == BODY
    assert fetch(f"https://{SEC}/gzipped?x=1") == BODY  # unpacked when the server says Content-Encoding: gzip
    assert [request["user-agent"] for request in Site.seen] == [USER_AGENT, USER_AGENT]
    assert [request["host"] for request in Site.seen] == [SEC, SEC]  # the https Host header: no port
    assert [request["path"] for request in Site.seen] == ["/plain", "/gzipped?x=1"]
    assert all(request["accept-encoding"] == "gzip" for request in Site.seen)


def test_the_fetcher_spaces_its_requests(network: LocalNetwork) -> None:
    fetch = fetcher(network, per_second=20)
    started = time.monotonic()
    for _ in range(4):
        fetch(f"https://{SEC}/plain")
    # Four requests at 20 per second: at least three intervals of 50 ms between the first and the last.
    assert time.monotonic() - started >= 0.15 * 0.95
    assert len(Site.seen) == 4


def test_http_errors_and_unreachable_hosts_become_fetch_errors(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=rf"^https://{SEC}/nothing answered HTTP 404$"):
        fetcher(network)(f"https://{SEC}/nothing")
    network.port = 9  # nothing listens there
    with pytest.raises(FetchError, match="could not be reached"):
        fetcher(network)(f"https://{SEC}/plain")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"http://{SEC}/plain", "only https:// URLs are fetched"),
        ("https://evil.example.test/plain", r"evil\.example\.test is not on this source's allow-list"),
        ("https://127.0.0.1/plain", "literal IP address"),
        ("https://169.254.169.254/latest/meta-data/", "literal IP address"),
        ("https://[::1]/plain", "literal IP address"),
        (f"https://{SEC}:8443/plain", "port 8443 is not the https port"),
        (f"https://user:secret@{SEC}/plain", "carries credentials"),
        (f"https://{SEC}/a path", "spaces"),
    ],
)
def test_a_url_outside_the_rules_is_refused_before_any_connection(
    network: LocalNetwork, url: str, reason: str
) -> None:
    with pytest.raises(FetchError, match=rf"^refusing {re.escape(shown_url(url))}: .*{reason}") as refused:
        fetcher(network)(url)
    assert network.hosts == [] and "secret" not in str(refused.value)


def test_a_message_names_a_url_by_its_host_and_path_never_its_query_or_credentials(
    network: LocalNetwork,
) -> None:
    """Errors reach a run's status line, the home page and the logs: an API key in a query stays out."""
    keyed = f"https://{SEC}/nothing?q=apple&api_key=sk-live-123"
    with pytest.raises(FetchError, match=rf"^https://{SEC}/nothing answered HTTP 404$") as failed:
        fetcher(network)(keyed)
    assert "sk-live-123" not in str(failed.value)
    assert shown_url("https://user:pw@host.example:8443/a/b?k=v#f") == "https://host.example:8443/a/b"
    assert shown_url("https://[::1]/x?y=1") == "https://[::1]/x"


def test_a_fetchers_own_headers_go_with_every_request_and_a_key_never_in_the_url(
    network: LocalNetwork,
) -> None:
    keyed = fetcher(network, headers={"X-Api-Key": "sk-live-123"})
    assert keyed(f"https://{SEC}/plain") == BODY
    assert Site.seen[-1]["x-api-key"] == "sk-live-123" and "sk-live-123" not in Site.seen[-1]["path"]


def test_a_redirect_between_listed_hosts_is_followed(network: LocalNetwork) -> None:
    assert fetcher(network)(f"https://{SEC}/redirect/https~{DATA}/plain") == BODY
    assert network.hosts == [SEC, DATA]
    assert [request["host"] for request in Site.seen] == [SEC, DATA]


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        (f"http~{DATA}/plain", "only https:// URLs are fetched"),
        ("https~evil.example.test/plain", "evil.example.test is not on this source's allow-list"),
        ("https~127.0.0.1/plain", "127.0.0.1 is a literal IP address"),
        ("https~169.254.169.254/latest/meta-data", "169.254.169.254 is a literal IP address"),
        ("https~[::1]/plain", "::1 is a literal IP address"),
        ("https~localhost/plain", "localhost is not on this source's allow-list"),
    ],
)
def test_a_redirect_outside_the_rules_is_refused_before_it_is_followed(
    network: LocalNetwork, location: str, reason: str
) -> None:
    with pytest.raises(
        FetchError, match=rf"^refusing the redirect from https://{SEC}/redirect/.* to .*: {reason}"
    ):
        fetcher(network)(f"https://{SEC}/redirect/{location}")
    assert network.hosts == [SEC]  # only the first, listed host was ever connected to


def test_too_many_redirects_are_refused(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=rf"^refusing https://{SEC}/loop/0: it redirects more than 3 times$"):
        fetcher(network, max_redirects=3)(f"https://{SEC}/loop/0")
    assert [request["path"] for request in Site.seen] == ["/loop/0", "/loop/1", "/loop/2", "/loop/3"]


def test_a_body_over_the_cap_is_refused_and_not_read_to_the_end(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=r"its body is over the cap of 262144 bytes"):
        fetcher(network, max_bytes=256 * 1024)(f"https://{SEC}/endless")
    assert Site.finished.wait(5)
    # The server had 64 MiB to send; the fetcher hung up after the cap, so most of it never left.
    assert Site.sent[0] < 32 * 1024 * 1024


def test_a_declared_length_over_the_cap_is_refused_before_reading(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=r"it declares 1000000000 bytes, over the cap of 1048576"):
        fetcher(network, max_bytes=1024 * 1024)(f"https://{SEC}/huge")


def test_a_body_cut_short_is_an_error_not_a_smaller_document(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=r"closed the connection after 10 of 100 bytes"):
        fetcher(network)(f"https://{SEC}/short")


def test_a_gzip_bomb_is_refused(network: LocalNetwork) -> None:
    with pytest.raises(FetchError, match=r"its gzip body unpacks to over 1048576 bytes"):
        fetcher(network, max_bytes=1024 * 1024)(f"https://{SEC}/bomb")


def test_unpacking_a_gzip_bomb_stops_at_the_cap_without_filling_memory() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="unpacks to over"):
            gunzip_capped(GZIP_BOMB, max_bytes=1024 * 1024, what="the bomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024  # the cap and some slack, not the bomb's 16 MiB


def test_gzip_unpacking_takes_every_member_and_refuses_a_truncated_body() -> None:
    twice = gzip.compress(b"one ") + gzip.compress(b"two")
    assert gunzip_capped(twice, max_bytes=100, what="x") == b"one two"
    with pytest.raises(FetchError, match="truncated gzip"):
        gunzip_capped(gzip.compress(BODY)[:-8], max_bytes=100, what="x")
    with pytest.raises(FetchError, match="not valid gzip"):
        gunzip_capped(b"\x1f\x8bnot gzip at all", max_bytes=100, what="x")


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_slow_drip_server_is_cut_off_at_the_total_deadline(network: LocalNetwork, phase: str) -> None:
    # Each byte arrives well within any per-read timeout; only a deadline for the whole fetch ends it.
    started = time.monotonic()
    with pytest.raises(FetchError, match=rf"/drip/{phase} did not finish within 0.4 s"):
        fetcher(network, deadline_s=0.4)(f"https://{SEC}/drip/{phase}")
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    "answers", [["169.254.169.254"], ["127.0.0.1"], ["::1"], ["fe80::1"], ["93.184.215.14", "10.0.0.7"]]
)
def test_a_listed_name_that_resolves_to_a_private_address_is_refused(answers: list[str]) -> None:
    asked: list[str] = []

    def resolve(host: str, timeout: float) -> list[str]:
        asked.append(host)
        return answers

    fetch = http_fetcher(
        user_agent=USER_AGENT,
        per_second=100,
        allowed_hosts=HOSTS,
        connect=public_https_connector(resolve=resolve),
    )
    with pytest.raises(FetchError, match=rf"^refusing https://{SEC}/x: {SEC} resolves to .*not a public"):
        fetch(f"https://{SEC}/x")
    assert asked == [SEC]


@pytest.mark.parametrize("host", ["*.sec.gov", "127.0.0.1", "localhost", "api.localhost", "sec.gov:443", ""])
def test_an_allow_list_takes_exact_public_host_names_only(host: str) -> None:
    with pytest.raises(ValueError, match="host name"):
        http_fetcher(user_agent=USER_AGENT, per_second=1, allowed_hosts=[host] if host else [])


def test_the_fetcher_needs_a_user_agent() -> None:
    with pytest.raises(ValueError, match="User-Agent is required"):
        http_fetcher(user_agent="  ", per_second=10, allowed_hosts=HOSTS)


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
