"""Where EDGAR documents come from: bundled snapshot files or SEC's live API, behind one interface.

Both return the documents exactly as SEC serves them (decoded JSON, floats kept as ``Decimal``), so the
parsers never know which one they were given.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from agents.data.errors import DataError, MalformedData
from agents.data.http import DEFAULT_MAX_BYTES, Fetcher, FetchError, gunzip_capped

TICKERS_URL = "https://www.sec.gov/files/company_tickers.json"
COMPANYFACTS_URL = "https://data.sec.gov/api/xbrl/companyfacts/CIK{cik:010d}.json"
SUBMISSIONS_URL = "https://data.sec.gov/submissions/CIK{cik:010d}.json"
# The only hosts a live EDGAR fetcher may reach, redirects included (``agents.data.http.http_fetcher``).
EDGAR_HOSTS = frozenset({"www.sec.gov", "data.sec.gov"})
# companyfacts is the largest EDGAR document: the biggest bundled one (NVDA) unpacks to 4.0 MB.
EDGAR_MAX_BYTES = DEFAULT_MAX_BYTES
_GZIP_MAGIC = b"\x1f\x8b"

# ticker (upper case) -> (CIK, company name as SEC lists it)
TickerMap = Mapping[str, tuple[int, str]]


class DocumentUnavailable(DataError):
    """The source has no such document: no snapshot file for it, or SEC did not serve it."""


class EdgarSource(Protocol):
    def company_tickers(self) -> TickerMap: ...

    def companyfacts(self, cik: int) -> dict[str, Any]: ...

    def submissions(self, cik: int) -> dict[str, Any]: ...


def decode_json(raw: bytes, *, what: str) -> Any:
    """JSON with exact decimals (companyfacts EPS 6.08 stays 6.08); gzip bytes are unpacked first."""
    try:
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        return json.loads(raw, parse_float=Decimal)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedData(f"{what} is not valid JSON: {exc}") from exc


def read_json_file(path: Path) -> Any:
    """A ``.json`` or ``.json.gz`` file; a missing file or bad JSON is a DataError naming the path."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentUnavailable(f"no such file: {path}") from exc
    except OSError as exc:
        raise DocumentUnavailable(f"cannot read {path}: {exc.strerror}") from exc
    return decode_json(raw, what=str(path))


def parse_company_tickers(payload: Any, *, what: str) -> dict[str, tuple[int, str]]:
    """SEC's ``{"0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."}, ...}`` as a ticker map."""
    if not isinstance(payload, dict):
        raise MalformedData(f"{what} is not SEC's company list (expected an object of companies)")
    tickers: dict[str, tuple[int, str]] = {}
    for entry in payload.values():
        try:
            ticker, cik, title = (
                str(entry["ticker"]).strip().upper(),
                int(entry["cik_str"]),
                str(entry["title"]),
            )
        except (TypeError, KeyError, ValueError) as exc:
            raise MalformedData(
                f"{what} has a company entry without ticker, cik_str and title: {entry!r}"
            ) from exc
        # The list is ordered by SEC's ranking; a ticker listed twice keeps its first company.
        tickers.setdefault(ticker, (cik, title))
    return tickers


def _object(payload: Any, *, what: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise MalformedData(f"{what} is not a JSON object")
    return payload


class SnapshotEdgarSource:
    """Files under ``root/edgar/``: ``reference/company_tickers.json``,
    ``companyfacts/CIK##########_*.json[.gz]`` and ``submissions/CIK##########_*.json``
    (the layout of ``data/snapshot`` and of ``../shared/data``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tickers: dict[str, tuple[int, str]] | None = None

    def company_tickers(self) -> TickerMap:
        if self._tickers is None:
            path = self.root / "edgar" / "reference" / "company_tickers.json"
            self._tickers = parse_company_tickers(read_json_file(path), what=str(path))
        return self._tickers

    def companyfacts(self, cik: int) -> dict[str, Any]:
        folder = self.root / "edgar" / "companyfacts"
        path = self._one_file(folder, f"CIK{cik:010d}_*.json.gz") or self._one_file(
            folder, f"CIK{cik:010d}_*.json"
        )
        if path is None:
            raise DocumentUnavailable(f"no companyfacts file for CIK {cik} in {folder}")
        return _object(read_json_file(path), what=str(path))

    def submissions(self, cik: int) -> dict[str, Any]:
        folder = self.root / "edgar" / "submissions"
        path = self._one_file(folder, f"CIK{cik:010d}_*.json")
        if path is None:
            raise DocumentUnavailable(f"no submissions file for CIK {cik} in {folder}")
        return _object(read_json_file(path), what=str(path))

    @staticmethod
    def _one_file(folder: Path, pattern: str) -> Path | None:
        matches = sorted(folder.glob(pattern))
        return matches[0] if matches else None


class LiveEdgarSource:
    """SEC's public endpoints through ``fetch`` (``agents.data.http.http_fetcher`` in production, limited to
    ``EDGAR_HOSTS``)."""

    def __init__(
        self,
        fetch: Fetcher,
        *,
        max_bytes: int = EDGAR_MAX_BYTES,
        keep: Callable[[str, bytes], None] | None = None,
    ) -> None:
        """``keep``: given each answer SEC sent (its URL and bytes, unpacked) before it is read."""
        self._fetch = fetch
        self._max_bytes = max_bytes
        self._keep = keep
        self._tickers: dict[str, tuple[int, str]] | None = None

    def company_tickers(self) -> TickerMap:
        if self._tickers is None:
            self._tickers = parse_company_tickers(self._get(TICKERS_URL), what=TICKERS_URL)
        return self._tickers

    def companyfacts(self, cik: int) -> dict[str, Any]:
        url = COMPANYFACTS_URL.format(cik=cik)
        return _object(self._get(url), what=url)

    def submissions(self, cik: int) -> dict[str, Any]:
        url = SUBMISSIONS_URL.format(cik=cik)
        return _object(self._get(url), what=url)

    def _get(self, url: str) -> Any:
        try:
            raw = self._fetch(url)
            if raw[:2] == _GZIP_MAGIC:
                # A .gz file served as such (no Content-Encoding) is unpacked here, under the fetcher's cap.
                raw = gunzip_capped(raw, max_bytes=self._max_bytes, what=url)
        except FetchError as exc:
            raise DocumentUnavailable(f"SEC did not serve {url}: {exc}") from exc
        if self._keep is not None:
            self._keep(url, raw)
        return decode_json(raw, what=url)
