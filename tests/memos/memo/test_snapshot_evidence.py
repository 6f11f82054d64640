"""Each demo company's quick specialists get the evidence the bundled snapshot holds for it, and nothing where
it holds none: the snapshot is loaded as ``bootstrap_demo`` loads it and read through the same selection a
run freezes in its data stage (``memos.pipeline.memo.evidence.select_evidence``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from agents.data.documents import document_id
from agents.data.prices import SnapshotPriceSource
from agents.evidence import EvidenceItem
from memos.models import Company, FactRecord, SourceDocument
from memos.pipeline.memo.evidence import select_evidence
from memos.services import snapshot
from memos.services.snapshot import LoadReport, load_snapshot, snapshot_version
from tests.memos.factories import empty_database

pytestmark = pytest.mark.django_db

QUICK = ("fundamentals", "quant", "news")
# What the bundle holds for each demo company (data/snapshot/ATTRIBUTION.md, "What the desk holds"):
# statements feed fundamentals, a price file feeds quant, an article that names the company feeds news.
FED: dict[str, set[str]] = {
    "AAPL": {"fundamentals", "quant", "news"},
    # Alphabet and Meta: companyfacts only (bundled for the agency's feasibility checks of a move's target).
    "GOOG": {"fundamentals"},
    "JPM": {"quant"},
    "KO": {"fundamentals", "quant"},
    "META": {"fundamentals"},
    "MSFT": {"quant", "news"},
    "NVDA": {"fundamentals", "news"},
    "TSLA": {"fundamentals"},
    "TSM": {"fundamentals"},
}
# NVIDIA's one document is a Polymarket market, not an article; the news specialist reads markets that name
# the company as sentiment.
NVIDIA_MARKET = document_id("market", "polymarket:503051")
LAST_STOCK_SESSION = date(2017, 9, 1)


@pytest.fixture(scope="module")
def loaded(django_db_setup: None, django_db_blocker: Any) -> Iterator[LoadReport]:
    """The bundled snapshot, loaded once for this module and emptied again afterwards."""
    with django_db_blocker.unblock():
        report = load_snapshot(root=Path(settings.SNAPSHOT_DIR), force=True)
    yield report
    with django_db_blocker.unblock():
        empty_database()


def evidence(ticker: str, specialist: str) -> list[EvidenceItem]:
    return select_evidence(Company.objects.get(ticker=ticker), [specialist])[specialist]


@pytest.mark.parametrize(
    ("ticker", "specialist"), [(ticker, name) for ticker, names in FED.items() for name in sorted(names)]
)
def test_a_quick_specialist_gets_evidence_wherever_the_bundle_holds_its_kind_of_data(
    loaded: LoadReport, ticker: str, specialist: str
) -> None:
    assert evidence(ticker, specialist), f"{ticker}'s {specialist} specialist has no evidence"


@pytest.mark.parametrize(
    ("ticker", "specialist"),
    [(ticker, name) for ticker, names in FED.items() for name in QUICK if name not in names],
)
def test_where_the_bundle_holds_nothing_of_its_kind_a_specialist_gets_nothing(
    loaded: LoadReport, ticker: str, specialist: str
) -> None:
    assert evidence(ticker, specialist) == []


def test_every_company_in_the_snapshot_is_a_demo_company_with_a_row_in_the_table(loaded: LoadReport) -> None:
    assert sorted(Company.objects.values_list("ticker", flat=True)) == sorted(FED)


def test_nvidia_s_polymarket_market_is_linked_to_nvda_and_is_all_its_news_could_show(
    loaded: LoadReport,
) -> None:
    market = SourceDocument.objects.get(doc_id=NVIDIA_MARKET)
    assert (market.title, market.tickers) == ("NVIDIA largest company in July?", ["NVDA"])
    # No other market or headline in the bundle names a demo company.
    linked = SourceDocument.objects.exclude(tickers=[]).exclude(kind="news")
    assert list(linked.values_list("doc_id", flat=True)) == [NVIDIA_MARKET]
    assert {item.evidence_id for item in evidence("NVDA", "news")} == {NVIDIA_MARKET}


@pytest.mark.parametrize("ticker", sorted(FED))
def test_news_evidence_is_only_documents_linked_to_the_company(loaded: LoadReport, ticker: str) -> None:
    for item in evidence(ticker, "news"):
        assert ticker in SourceDocument.objects.get(doc_id=item.evidence_id).tickers


@pytest.mark.parametrize("ticker", ["AAPL", "JPM", "KO", "MSFT"])
def test_quant_figures_stand_at_the_last_session_of_the_stock_s_own_price_file(
    loaded: LoadReport, ticker: str
) -> None:
    prices = SnapshotPriceSource(Path(settings.SNAPSHOT_DIR))
    assert prices.series(ticker).last_date == LAST_STOCK_SESSION
    # The benchmark runs on to 2020, but no figure is dated after the stock's own last session.
    assert prices.series("SPY").last_date == date(2020, 8, 28)
    items = evidence(ticker, "quant")
    assert {item.period for item in items} == {f"as of {LAST_STOCK_SESSION}"}
    assert all(item.evidence_id.endswith(f":{LAST_STOCK_SESSION}") for item in items)
    assert not FactRecord.objects.filter(fiscal_period="DAY", period_end__gt=LAST_STOCK_SESSION).exists()


def test_the_load_report_says_what_the_snapshot_holds_no_file_for(loaded: LoadReport) -> None:
    assert loaded.gaps == [
        "no financial statements in the snapshot for JPM, MSFT",
        "no daily prices in the snapshot for GOOG, META, NVDA, TSLA, TSM",
        "no news articles in the snapshot for GOOG, JPM, KO, META, NVDA, TSLA, TSM",
        "quant figures stand at 2017-09-01, the last session of the price files, for AAPL, JPM, KO, MSFT",
    ]
    assert loaded.summary().endswith("\n  " + "\n  ".join(loaded.gaps))


def test_a_new_loader_version_loads_an_unchanged_snapshot_again(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(settings.SNAPSHOT_DIR)
    before = snapshot_version(root)
    monkeypatch.setattr(snapshot, "LOADER_VERSION", snapshot.LOADER_VERSION + 1)
    assert snapshot_version(root) != before
