"""Snapshot and live EDGAR sources behind one interface; the live one is fed recorded SEC bodies."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from agents.data.edgar import (
    DocumentUnavailable,
    EdgarSource,
    LiveEdgarSource,
    SnapshotEdgarSource,
    load_company_facts,
    load_company_filings,
)
from agents.data.errors import MalformedData, UnknownTicker
from agents.data.http import FetchError
from tests.agents.data import SHARED_DATA, SNAPSHOT, shared_file

COMPANYFACTS_API = "https://data.sec.gov/api/xbrl/companyfacts"
RECORDED = {
    "https://www.sec.gov/files/company_tickers.json": "edgar/reference/company_tickers.json",
    f"{COMPANYFACTS_API}/CIK0000320193.json": "edgar/companyfacts/CIK0000320193_AAPL.json.gz",
    "https://data.sec.gov/submissions/CIK0000320193.json": "edgar/submissions/CIK0000320193_AAPL.json",
}


class RecordedSec:
    """A Fetcher that serves recorded SEC bodies (as urllib hands them over: decompressed) and logs URLs."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, url: str) -> bytes:
        self.urls.append(url)
        if url not in RECORDED:
            raise FetchError(f"{url} answered HTTP 404")
        raw = shared_file(RECORDED[url]).read_bytes()
        return gzip.decompress(raw) if RECORDED[url].endswith(".gz") else raw


@pytest.mark.parametrize("root", [SHARED_DATA, SNAPSHOT], ids=["shared-data", "product-snapshot"])
def test_the_snapshot_source_reads_both_layouts(root: Path) -> None:
    source: EdgarSource = SnapshotEdgarSource(root)
    tickers = source.company_tickers()
    assert tickers["AAPL"] == (320193, "Apple Inc.")
    assert tickers["SPY"][0] == 884394
    assert source.companyfacts(320193)["entityName"] == "Apple Inc."
    assert source.submissions(320193)["cik"] == "0000320193"
    facts = load_company_facts(source, "aapl").facts_by_id()
    assert facts["AAPL:revenue:FY2024"].value == 391035000000


def test_an_unknown_ticker_says_so() -> None:
    with pytest.raises(UnknownTicker, match=r"^unknown ticker 'ZZZZ': not in SEC's company list$"):
        load_company_facts(SnapshotEdgarSource(SHARED_DATA), "zzzz")


def test_a_company_without_companyfacts_points_to_the_inline_xbrl_route() -> None:
    with pytest.raises(DocumentUnavailable) as caught:
        load_company_facts(SnapshotEdgarSource(SHARED_DATA), "KO")
    message = str(caught.value)
    assert "KO (COCA COLA CO, CIK 21344) has no companyfacts" in message
    assert "inline XBRL" in message


def test_a_plain_json_companyfacts_file_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "edgar" / "reference").mkdir(parents=True)
    (tmp_path / "edgar" / "companyfacts").mkdir()
    shutil.copy(shared_file("edgar/reference/company_tickers.json"), tmp_path / "edgar" / "reference")
    shutil.copy(
        shared_file("edgar/companyfacts/key_concepts/CIK0001318605_TSLA_key_concepts.json"),
        tmp_path / "edgar" / "companyfacts" / "CIK0001318605_TSLA.json",
    )
    facts = load_company_facts(SnapshotEdgarSource(tmp_path), "TSLA").facts_by_id()
    assert facts["TSLA:revenue:FY2021"].value == 53823000000


def test_a_snapshot_without_the_company_list_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DocumentUnavailable, match=r"company_tickers\.json"):
        SnapshotEdgarSource(tmp_path).company_tickers()


def test_the_live_source_asks_secs_endpoints_and_parses_like_the_snapshot() -> None:
    sec = RecordedSec()
    live = LiveEdgarSource(sec)
    from_live = load_company_facts(live, "AAPL")
    assert from_live == load_company_facts(SnapshotEdgarSource(SHARED_DATA), "AAPL")
    filings = load_company_filings(live, "AAPL")
    assert filings[0].cik == 320193
    assert sec.urls == [
        "https://www.sec.gov/files/company_tickers.json",  # asked once, then kept
        f"{COMPANYFACTS_API}/CIK0000320193.json",
        "https://data.sec.gov/submissions/CIK0000320193.json",
    ]


def test_a_live_fetch_failure_becomes_a_data_error() -> None:
    live = LiveEdgarSource(RecordedSec())
    with pytest.raises(DocumentUnavailable, match=r"CIK0000021344\.json.*HTTP 404"):
        load_company_facts(live, "KO")


def test_a_live_body_that_is_not_json_is_malformed() -> None:
    live = LiveEdgarSource(lambda url: b"<html>rate limited</html>")
    with pytest.raises(MalformedData, match=r"company_tickers\.json is not valid JSON"):
        live.company_tickers()
