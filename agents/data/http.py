"""The one way live adapters reach the network: a declared User-Agent and a request-rate ceiling.

Live adapters take a ``Fetcher`` (a callable from URL to bytes) so tests hand them recorded responses;
the default suite never touches the network.
"""

from __future__ import annotations

import gzip
import threading
import time
import urllib.request
from collections.abc import Callable
from http.client import HTTPException
from urllib.error import HTTPError, URLError

from agents.data.errors import DataError

Fetcher = Callable[[str], bytes]


class FetchError(DataError):
    """A live source did not answer usefully (HTTP error, network failure, refused scheme).

    A DataError, so every command reports it as one clear line rather than a traceback.
    """


class RateLimiter:
    """Spaces calls at least ``1 / per_second`` seconds apart, across the threads of one process."""

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


def http_fetcher(*, user_agent: str, per_second: float, timeout_s: float = 30.0) -> Fetcher:
    """A Fetcher over HTTPS that declares ``user_agent`` and stays under ``per_second`` requests."""
    if not user_agent.strip():
        raise ValueError("a User-Agent is required for live sources")
    limiter = RateLimiter(per_second)

    def fetch(url: str) -> bytes:
        if not url.startswith("https://"):
            raise FetchError(f"refusing non-HTTPS URL {url!r}")
        limiter.wait()
        request = urllib.request.Request(  # noqa: S310  (scheme checked above)
            url, headers={"User-Agent": user_agent, "Accept-Encoding": "gzip"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
                body: bytes = response.read()
                if response.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                return body
        except HTTPError as exc:
            raise FetchError(f"{url} answered HTTP {exc.code}") from exc
        # HTTPException covers a connection the server dropped mid-answer (RemoteDisconnected).
        except (URLError, TimeoutError, ConnectionError, HTTPException) as exc:
            raise FetchError(f"{url} could not be reached: {exc}") from exc

    return fetch
