"""HTML to PDF with WeasyPrint, fetching nothing but inline ``data:`` and the app's own static files.

The HTML may carry model-written text, and WeasyPrint's own fetcher follows ``file://`` and any http(s)
URL: a stylesheet link, an image or a ``<link rel=attachment>`` would read a local file into the PDF or
make a request from inside our network. So every URL goes through ``StaticOnlyFetcher``:

- ``data:`` URIs are decoded by WeasyPrint's own fetcher, which is told to allow that scheme only;
- ``<allowed_prefix>…`` on the app's own origin (the base URL's scheme, host and port) is read from a
  regular file under ``static_root``, after the path is normalised and its symlinks resolved (with no
  ``static_root``, such a URL is missing: a print that serves no static file);
- anything else is refused without a byte leaving the process: ``file:``, loopback, link-local and
  cloud-metadata addresses, private ranges and every other host. Rendering never needs the network.

A refused or missing resource simply is not in the PDF; the URLs are handed back on ``RenderedPdf``.
"""

from __future__ import annotations

import ipaddress
import logging
import mimetypes
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

from weasyprint import CSS, HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse

from agents.render.fonts import CSS_FONT_FAMILY
from agents.text.cleaning import clean_render_text

logger = logging.getLogger(__name__)

# With no base URL, relative links resolve against this origin, which never resolves (RFC 2606 .invalid):
# it only names "the app" so that /static/ links can be served from disk.
INTERNAL_BASE_URL = "http://analyst-desk.invalid/"
DEFAULT_STATIC_PREFIX = "/static/"

_DEFAULT_PORTS = {"http": 80, "https": 443}
_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
_METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254"))
_LOGGED_URL_CHARS = 200


@dataclass(frozen=True)
class RenderedPdf:
    pdf: bytes
    pages: int
    refused: tuple[str, ...]
    """URLs the policy refused: nothing was read or sent for them."""
    missing: tuple[str, ...]
    """Allowed URLs with nothing behind them (no such static file, an undecodable ``data:`` URI)."""


class NotServed(ValueError):
    """The fetcher did not serve a URL. WeasyPrint catches it, logs it and renders without the resource."""


class Refused(NotServed):
    pass


class Missing(NotServed):
    pass


def html_to_pdf(
    html: str,
    *,
    base_url: str | None,
    static_root: Path | None,
    allowed_prefix: str = DEFAULT_STATIC_PREFIX,
) -> RenderedPdf:
    """Render ``html`` to PDF. ``base_url`` is the app's own http(s) URL (relative links resolve against it,
    and ``allowed_prefix`` URLs on its origin are read from ``static_root``); None uses an internal one."""
    base = base_url or INTERNAL_BASE_URL
    fetcher = StaticOnlyFetcher(base_url=base, static_root=static_root, allowed_prefix=allowed_prefix)
    document = HTML(string=clean_render_text(html), base_url=base, url_fetcher=fetcher)
    # WeasyPrint 70 fetches @color-profile sources outside its usual try (css/__init__.py), so a failed
    # fetch there aborts the whole render. While laying out, an unserved URL is therefore answered with
    # an empty body, which every consumer drops with a warning; while writing the PDF it raises again,
    # so that a refused <link rel=attachment> is left out instead of embedded as an empty file.
    fetcher.empty_when_not_served = True
    rendered = document.render(stylesheets=[_default_faces()])
    fetcher.empty_when_not_served = False
    pdf: bytes = rendered.write_pdf()
    return RenderedPdf(
        pdf=pdf, pages=len(rendered.pages), refused=tuple(fetcher.refused), missing=tuple(fetcher.missing)
    )


@cache
def _default_faces() -> CSS:
    """A user stylesheet (below every author rule): text the document gives no font is drawn in the deck's
    faces, with the fallback for the scripts DejaVu Sans lacks, rather than whatever fontconfig picks."""
    return CSS(string=f"html {{ font-family: {CSS_FONT_FAMILY}; }}")


class StaticOnlyFetcher(URLFetcher):  # type: ignore[misc]  # WeasyPrint ships no type hints
    """A WeasyPrint URL fetcher that serves ``data:`` and the app's static files, and nothing else.

    WeasyPrint (68 and later) wants a ``URLFetcher`` instance whose ``fetch(url, headers)`` returns a
    ``URLFetcherResponse`` or raises; a plain function breaks its error path.
    """

    def __init__(self, *, base_url: str, static_root: Path | None, allowed_prefix: str) -> None:
        # The parent's opener only ever sees data: URLs, and it is told so too, as a second lock.
        super().__init__(allowed_protocols={"data"}, allow_redirects=False, fail_on_errors=False)
        origin = _origin(urlsplit(base_url))
        if origin is None:
            raise ValueError(f"base_url must be an http(s) URL without credentials, not {base_url!r}")
        if not (allowed_prefix.startswith("/") and allowed_prefix.endswith("/")):
            raise ValueError(f"allowed_prefix must start and end with '/', not {allowed_prefix!r}")
        self._origin = origin
        self._root = static_root.resolve(strict=True) if static_root is not None else None
        self._prefix = allowed_prefix
        self.refused: list[str] = []
        self.missing: list[str] = []
        self.empty_when_not_served = False

    def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> URLFetcherResponse:
        try:
            if url[:5].lower() == "data:":
                return self._data(url, headers)
            path = self._static_file(url)
            body, content_type = _read_regular_file(path)
        except NotServed as error:
            return self._not_served(url, error)
        return URLFetcherResponse(url, body, {"Content-Type": content_type})

    def _data(self, url: str, headers: Mapping[str, str] | None) -> URLFetcherResponse:
        try:
            response: URLFetcherResponse = super().fetch(url, headers)
        except (ValueError, OSError) as error:  # binascii.Error is a ValueError, URLError an OSError
            raise Missing(f"undecodable data: URI ({error})") from error
        return response

    def _static_file(self, url: str) -> Path:
        try:
            parts = urlsplit(url)
            origin = _origin(parts)
        except ValueError as error:  # a malformed host or port
            raise Refused(f"malformed URL ({error})") from error
        if origin != self._origin:
            raise Refused(_refusal_reason(parts))
        path = unquote(parts.path)
        if not path.startswith(self._prefix):
            raise Refused(f"only {self._prefix} is served from the app's own origin")
        if self._root is None:
            raise Missing("this print serves no static file")
        relative = path[len(self._prefix) :]
        if "\x00" in relative:
            raise Refused("a NUL byte in the path")
        # Lexically first (%2e%2e survives URL joining), then again once symlinks are resolved.
        if not Path(os.path.normpath(self._root / relative)).is_relative_to(self._root):
            raise Refused("the path leaves the static root")
        try:
            resolved = (self._root / relative).resolve(strict=True)
        except (OSError, RuntimeError) as error:  # no such file, or a symlink loop
            raise Missing("no such static file") from error
        if not resolved.is_relative_to(self._root):
            raise Refused("a symlink leaves the static root")
        return resolved

    def _not_served(self, url: str, error: NotServed) -> URLFetcherResponse:
        recorded = url if url[:5].lower() != "data:" else url[:64] + "…"
        found = self.refused if isinstance(error, Refused) else self.missing
        if recorded not in found:
            found.append(recorded)
            logger.warning("PDF render: not fetching %s: %s", recorded[:_LOGGED_URL_CHARS], error)
        if self.empty_when_not_served:
            return URLFetcherResponse(url, b"", {"Content-Type": "text/css"})
        raise error


def _origin(parts: SplitResult) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL without credentials; None for anything else."""
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or parts.username is not None or parts.password is not None:
        return None
    return scheme, parts.hostname or "", parts.port or _DEFAULT_PORTS[scheme]


def _read_regular_file(path: Path) -> tuple[bytes, str]:
    # O_NOFOLLOW: the path was resolved, so a symlink now means it was swapped since; O_NONBLOCK: a FIFO
    # must not hang the render before fstat shows it is not a regular file.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Missing("not a regular file")
            body = b"".join(iter(partial(os.read, fd, 1 << 20), b""))
        finally:
            os.close(fd)
    except OSError as error:
        raise Missing(f"cannot read the static file ({error.strerror})") from error
    return body, mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _refusal_reason(parts: SplitResult) -> str:
    """Why a URL off the app's origin is refused, for the log; every such URL is refused anyway."""
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return f"{scheme or 'scheme-less'} URLs are never fetched"
    if parts.username is not None or parts.password is not None:
        return "a URL with credentials"
    return f"{_host_kind(parts.hostname or '')}: rendering never uses the network"


def _host_kind(host: str) -> str:
    if host == "localhost" or host.endswith(".localhost"):
        return "a loopback host"
    if host in _METADATA_HOSTS:
        return "a cloud metadata host"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "another host"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    kinds = (
        (address in _METADATA_ADDRESSES, "a cloud metadata address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_private, "a private address"),
    )
    return next((kind for matches, kind in kinds if matches), "a public address")
