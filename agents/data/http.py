"""The one way live adapters reach the network: HTTPS to named hosts, within a size cap and a total deadline.

Each live adapter passes its own allow-list of exact host names. Every URL, the first and each redirect's,
must be ``https://`` to a listed host on the default port; literal IP addresses and loopback names are
refused even when listed, and a listed name that resolves to a loopback, link-local or private address is
refused before anything is sent (the socket then connects to the very address that was checked, so a second
DNS answer cannot swap it). The body is read in chunks up to a cap, a gzip body is unpacked up to the same
cap, and one deadline covers the whole fetch: resolving, connecting, redirects and body.

Live adapters take a ``Fetcher`` (a callable from URL to bytes) so tests hand them recorded responses; the
default suite never touches the network. Tests of this module reach a local server through the
``connect`` seam of ``http_fetcher``: every check above still runs, only the socket comes from the test.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Protocol
from urllib.parse import urljoin, urlsplit

from agents.data.errors import DataError

Fetcher = Callable[[str], bytes]

# SEC companyfacts is the largest document any adapter reads: the biggest bundled one (NVDA) unpacks to
# 4.0 MB, and SEC's largest filers run to several times that. 20 MiB is headroom, not an expected size.
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_DEADLINE_S = 30.0
DEFAULT_MAX_REDIRECTS = 5
HTTPS_PORT = 443
_CHUNK = 64 * 1024
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# A DNS name with at least one dot and a top-level label that starts with a letter: no IP literal
# ("127.0.0.1", "2130706433"), no wildcard, no port, no scheme can pass.
_HOST_NAME = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def shown_url(url: str) -> str:
    """What a message may say of a URL: its scheme, host, port and path, never its query (an API key may
    ride there), its user info or its fragment. Errors reach a run's status line, the home page and logs."""
    parts = urlsplit(url)
    place = parts.netloc.rsplit("@", 1)[-1]  # the host and port as written, an IPv6 literal's brackets kept
    return f"{parts.scheme}://{place}{parts.path}" if parts.scheme and place else parts.path[:200]


class FetchError(DataError):
    """A live source did not answer usefully (HTTP error, network failure) or a URL was refused.

    A DataError, so every command reports it as one clear line rather than a traceback.
    """


class Limiter(Protocol):
    """What a fetcher asks before each request: to wait for its turn."""

    def wait(self) -> None: ...


class RateLimiter:
    """Spaces calls at least ``1 / per_second`` seconds apart, across the threads of one process (every
    process together: agents.data.shared_rate.SharedRateLimiter)."""

    def __init__(
        self,
        per_second: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_slot = 0.0

    def wait(self) -> None:
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._interval
        if slot > now:
            self._sleep(slot - now)


class Deadline:
    """The time left for one whole fetch; when it runs out, the watched socket is shut down.

    A socket timeout bounds a single read, so a server that drips one byte a second never trips it; a
    timer that shuts the socket makes the blocked read return, whatever phase the fetch is in.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._timer.cancel()
        with self._lock:
            self._socket = None

    @property
    def expired(self) -> bool:
        return self._expired or time.monotonic() >= self._end

    def remaining(self) -> float:
        """Seconds left, at least a millisecond: a zero timeout would make a socket non-blocking."""
        return max(self._end - time.monotonic(), 0.001)

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the time is up (at once if it already is)."""
        with self._lock:
            self._socket = sock
            if self._expired:
                _cut(sock)

    def _expire(self) -> None:
        with self._lock:
            self._expired = True
            if self._socket is not None:
                _cut(self._socket)


def _cut(sock: socket.socket) -> None:
    # The base-class shutdown acts on the file descriptor and leaves an SSLSocket's state to its own thread.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


# host name -> a connected socket speaking HTTP for it (TLS in production), opened within the deadline.
Connector = Callable[[str, Deadline], socket.socket]
# host name, seconds -> the addresses it resolves to.
Resolver = Callable[[str, float], list[str]]


def resolve_host(host: str, timeout: float) -> list[str]:
    """The addresses ``host`` resolves to; getaddrinfo has no timeout of its own, so it runs in a thread."""
    answers: list[list[str]] = []
    failures: list[OSError] = []

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, HTTPS_PORT, type=socket.SOCK_STREAM)
            answers.append(list(dict.fromkeys(str(info[4][0]) for info in infos)))
        except OSError as exc:
            failures.append(exc)

    worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
    worker.start()
    worker.join(timeout)
    if failures:
        raise FetchError(f"{host} could not be resolved: {failures[0]}")
    if not answers or not answers[0]:
        raise FetchError(f"{host} did not resolve within {timeout:.1f} s")
    return answers[0]


def public_https_connector(
    resolve: Resolver = resolve_host, context: ssl.SSLContext | None = None
) -> Connector:
    """TLS (certificate and host name verified) to a public address of the host, never a private one."""
    tls = context or ssl.create_default_context()

    def connect(host: str, deadline: Deadline) -> socket.socket:
        addresses = resolve(host, deadline.remaining())
        for address in addresses:
            if not ipaddress.ip_address(address).is_global:
                # One private answer among public ones is as suspicious as all of them: refuse the name.
                raise FetchError(f"{host} resolves to {address}, which is not a public address")
        failure: OSError | None = None
        for address in addresses:
            try:
                raw = socket.create_connection((address, HTTPS_PORT), timeout=deadline.remaining())
            except OSError as exc:
                failure = exc
                continue
            try:
                secure = tls.wrap_socket(raw, server_hostname=host, do_handshake_on_connect=False)
            except OSError:
                raw.close()
                raise
            deadline.watch(secure)  # before the handshake, which a slow server could drip out too
            try:
                secure.do_handshake()
            except OSError:
                secure.close()
                raise
            return secure
        raise failure or OSError(f"no address for {host}")

    return connect


def allowed_host_set(hosts: Iterable[str]) -> frozenset[str]:
    """Exact host names, lower-cased; a wildcard, an IP address or a loopback name is a configuration error.

    No wildcards: each adapter talks to two hosts at most, and listing them keeps a sibling subdomain
    (an upload or redirect service of the same organisation) out.
    """
    names = frozenset(host.strip().lower() for host in hosts)
    if not names:
        raise ValueError("a live source needs an allow-list of at least one host name")
    for name in sorted(names):
        if not _HOST_NAME.match(name) or name.endswith(".localhost"):
            raise ValueError(f"{name!r} is not an exact public host name (no IPs, wildcards or ports)")
    return names


def _url_problem(url: str, hosts: frozenset[str]) -> str | None:
    """Why ``url`` may not be fetched from ``hosts``, or ``None`` when it may."""
    if not url.isascii() or any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        return "it has spaces, control or non-ASCII characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "it is not a well-formed URL"
    host = parts.hostname or ""
    checks = (
        (parts.scheme != "https", "only https:// URLs are fetched"),
        (not host, "it names no host"),
        (parts.username is not None or parts.password is not None, "it carries credentials"),
        (port not in (None, HTTPS_PORT), f"port {port} is not the https port"),
        (_is_ip_address(host), f"{host} is a literal IP address, never fetched whatever the allow-list says"),
        (host not in hosts, f"{host} is not on this source's allow-list ({', '.join(sorted(hosts))})"),
    )
    return next((reason for failed, reason in checks if failed), None)


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def gunzip_capped(body: bytes, *, max_bytes: int, what: str) -> bytes:
    """``body`` unpacked, refused as soon as the output passes ``max_bytes`` (a gzip bomb stops there)."""
    unpacked = bytearray()
    pending = body
    try:
        while pending:
            stream = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            while pending:
                unpacked += stream.decompress(pending, max_bytes + 1 - len(unpacked))
                if len(unpacked) > max_bytes:
                    raise FetchError(f"refusing {what}: its gzip body unpacks to over {max_bytes} bytes")
                pending = stream.unconsumed_tail
            if not stream.eof:
                raise FetchError(f"{what} sent a truncated gzip body")
            pending = stream.unused_data  # a second gzip member follows the first
    except zlib.error as exc:
        raise FetchError(f"{what} sent a body that is not valid gzip: {exc}") from exc
    return bytes(unpacked)


class _Connection(http.client.HTTPConnection):
    """HTTP/1.1 over the socket a Connector opened, with the ``Host`` header of an https URL."""

    default_port = HTTPS_PORT  # so the Host header is the bare name, as it is for https://host/

    def __init__(self, host: str, open_socket: Callable[[], socket.socket]) -> None:
        super().__init__(host, HTTPS_PORT)
        self._open_socket = open_socket

    def connect(self) -> None:
        self.sock = self._open_socket()


def http_fetcher(
    *,
    user_agent: str,
    per_second: float,
    allowed_hosts: Iterable[str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    deadline_s: float = DEFAULT_DEADLINE_S,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    connect: Connector | None = None,
    limiter: Limiter | None = None,
    headers: Mapping[str, str] | None = None,
) -> Fetcher:
    """A Fetcher over HTTPS to ``allowed_hosts`` only, declaring ``user_agent``, under ``per_second`` (in this
    process, or under ``limiter`` where one is given: a limit shared by every process). ``headers`` are sent
    with every request (an API key: a header, never a URL's query, which errors and logs would quote).

    ``connect`` is the seam tests use to reach a local server; production leaves it to
    ``public_https_connector``.
    """
    return _HttpsFetcher(
        user_agent=user_agent,
        limiter=limiter or RateLimiter(per_second),
        hosts=allowed_host_set(allowed_hosts),
        max_bytes=max_bytes,
        deadline_s=deadline_s,
        max_redirects=max_redirects,
        connect=connect or public_https_connector(),
        headers=headers or {},
    )


class _HttpsFetcher:
    def __init__(
        self,
        *,
        user_agent: str,
        limiter: Limiter,
        hosts: frozenset[str],
        max_bytes: int,
        deadline_s: float,
        max_redirects: int,
        connect: Connector,
        headers: Mapping[str, str],
    ) -> None:
        if not user_agent.strip():
            raise ValueError("a User-Agent is required for live sources")
        if max_bytes <= 0 or deadline_s <= 0 or max_redirects < 0:
            raise ValueError("max_bytes and deadline_s must be positive, max_redirects not negative")
        self._headers = {
            **headers,
            "User-Agent": user_agent,
            "Accept-Encoding": "gzip",
            "Connection": "close",
        }
        self._limiter = limiter
        self._hosts = hosts
        self._max_bytes = max_bytes
        self._deadline_s = deadline_s
        self._max_redirects = max_redirects
        self._connect = connect

    def __call__(self, url: str) -> bytes:
        if problem := _url_problem(url, self._hosts):
            raise FetchError(f"refusing {shown_url(url)}: {problem}")
        self._limiter.wait()
        # The deadline starts after the first wait: queueing behind this process's other fetches is not
        # time the remote takes.
        with Deadline(self._deadline_s) as deadline:
            try:
                return self._follow(url, deadline)
            except FetchError:
                raise
            except (OSError, http.client.HTTPException) as exc:
                if deadline.expired:
                    raise self._late(url) from exc
                raise FetchError(f"{shown_url(url)} could not be reached: {exc}") from exc

    def _late(self, url: str) -> FetchError:
        return FetchError(
            f"{shown_url(url)} did not finish within {self._deadline_s:g} s (connect, redirects and body)"
        )

    def _follow(self, url: str, deadline: Deadline) -> bytes:
        current = url
        for hop in range(self._max_redirects + 1):
            if hop:
                self._limiter.wait()  # a redirect is one more request to the same organisation
            status, location, body, encoding = self._get(current, deadline)
            if status in _REDIRECT_STATUSES and location:
                following = urljoin(current, location.strip())
                if problem := _url_problem(following, self._hosts):
                    to = shown_url(following)
                    raise FetchError(f"refusing the redirect from {shown_url(current)} to {to}: {problem}")
                current = following
                continue
            if status != http.client.OK:
                raise FetchError(f"{shown_url(current)} answered HTTP {status}")
            if deadline.expired:  # a shut socket reads like the end of a body sent without a length
                raise self._late(url)
            if encoding in ("gzip", "x-gzip"):
                return gunzip_capped(body, max_bytes=self._max_bytes, what=shown_url(current))
            if encoding != "identity":
                raise FetchError(
                    f"{shown_url(current)} sent its body in {encoding!r} encoding, which was not asked for"
                )
            return body
        raise FetchError(f"refusing {shown_url(url)}: it redirects more than {self._max_redirects} times")

    def _get(self, url: str, deadline: Deadline) -> tuple[int, str | None, bytes, str]:
        """One request: status, Location, body (read only for a 200) and Content-Encoding."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        connection = _Connection(host, lambda: self._open(host, url, deadline))
        response: http.client.HTTPResponse | None = None
        try:
            connection.request(
                "GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), headers=self._headers
            )
            response = connection.getresponse()
            body = self._read_capped(response, url, deadline) if response.status == http.client.OK else b""
            encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
            return response.status, response.getheader("Location"), body, encoding
        finally:
            if response is not None:
                response.close()
            connection.close()

    def _open(self, host: str, url: str, deadline: Deadline) -> socket.socket:
        try:
            sock = self._connect(host, deadline)
        except FetchError as exc:
            raise FetchError(f"refusing {shown_url(url)}: {exc}") from exc
        deadline.watch(sock)
        return sock

    def _read_capped(self, response: http.client.HTTPResponse, url: str, deadline: Deadline) -> bytes:
        declared = (response.getheader("Content-Length") or "").strip()
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise FetchError(
                f"refusing {shown_url(url)}: it declares {declared} bytes, over the cap of {self._max_bytes}"
            )
        body = bytearray()
        while chunk := response.read1(_CHUNK):
            body += chunk
            if len(body) > self._max_bytes:
                raise FetchError(
                    f"refusing {shown_url(url)}: its body is over the cap of {self._max_bytes} bytes"
                )
            if deadline.expired:
                raise self._late(url)
        # A chunked body carries its own framing; a Content-Length beside it means nothing (RFC 9112 6.3).
        framed = declared.isdigit() and not response.getheader("Transfer-Encoding")
        if framed and len(body) != int(declared) and not deadline.expired:
            raise FetchError(f"{shown_url(url)} closed the connection after {len(body)} of {declared} bytes")
        return bytes(body)
