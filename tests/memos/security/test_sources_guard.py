"""memos.pipeline.data_sources: live fetches are refused inside a database transaction, and EDGAR's fetcher
is limited to SEC's hosts. The network itself is faked: ``http_fetcher`` is swapped for a recorder."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from pytest_django.fixtures import Settings

from agents.data.edgar import DocumentUnavailable
from agents.data.edgar.sources import EDGAR_HOSTS, EDGAR_MAX_BYTES
from agents.data.http import FetchError
from memos.pipeline import data_sources as sources

TICKERS_URL = "https://www.sec.gov/files/company_tickers.json"
TICKERS = b'{"0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."}}'


class RecordedNetwork:
    """Stands in for ``http_fetcher``: remembers how it was configured and which URLs were fetched."""

    def __init__(self) -> None:
        self.configured: dict[str, Any] = {}
        self.fetched: list[str] = []

    def __call__(self, **options: Any) -> Any:
        self.configured = options

        def fetch(url: str) -> bytes:
            self.fetched.append(url)
            return TICKERS

        return fetch


@pytest.fixture
def network(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> RecordedNetwork:
    settings.DATA_MODE = "live"
    recorded = RecordedNetwork()
    monkeypatch.setattr(sources, "http_fetcher", recorded)
    return recorded


@pytest.mark.django_db
def test_a_fetch_inside_a_transaction_is_refused_before_it_reaches_the_network(
    network: RecordedNetwork,
) -> None:
    source = sources.edgar_source()
    with transaction.atomic(), pytest.raises(DocumentUnavailable) as caught:
        source.company_tickers()
    assert isinstance(caught.value.__cause__, FetchError)
    assert "inside a database transaction" in str(caught.value)
    assert network.fetched == []


@pytest.mark.django_db
def test_a_fetch_outside_any_transaction_of_the_application_goes_ahead(network: RecordedNetwork) -> None:
    # The test's own rollback block is open here, as it is in every django_db test: it does not count.
    assert sources.edgar_source().company_tickers()["AAPL"] == (320193, "Apple Inc.")
    assert network.fetched == [TICKERS_URL]


@pytest.mark.django_db(transaction=True)
def test_the_guard_reads_the_connection_when_no_test_transaction_wraps_it() -> None:
    fetched: list[str] = []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        return b"ok"

    guarded = sources.outside_transactions(fetch)
    assert guarded(TICKERS_URL) == b"ok"
    with transaction.atomic(), pytest.raises(FetchError, match=rf"^refusing {TICKERS_URL}: a network fetch"):
        guarded(TICKERS_URL)
    assert fetched == [TICKERS_URL]


def test_the_live_edgar_fetcher_may_reach_sec_s_two_hosts_only(network: RecordedNetwork) -> None:
    sources.edgar_source()
    assert network.configured["allowed_hosts"] == EDGAR_HOSTS == {"www.sec.gov", "data.sec.gov"}
    assert network.configured["max_bytes"] == EDGAR_MAX_BYTES
