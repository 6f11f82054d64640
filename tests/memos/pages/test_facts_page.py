"""The fact store's own page: one count per kind of holding at the top, and filters ("has statements", "has
prices", "has documents") that combine in the query string. Prices the screen charts (the stocknet universe's
files) count as price history."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from memos.models import SourceDocument
from tests.conftest import ROOT
from tests.memos.factories import company, revenue_fact
from tests.memos.pages.test_holdings import row_of, text_of

PRICES = ROOT / "data" / "snapshot" / "prices" / "daily"
STOCKNET_PRICES = ROOT / "data" / "snapshot" / "stocknet" / "price"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    """AAPL's price file among the snapshot's, MSFT's only in the stocknet universe the screen reads."""
    (tmp_path / "prices" / "daily").mkdir(parents=True)
    (tmp_path / "stocknet" / "price").mkdir(parents=True)
    shutil.copy(PRICES / "AAPL_2012-2017_stocknet.csv", tmp_path / "prices" / "daily")
    shutil.copy(STOCKNET_PRICES / "MSFT.csv", tmp_path / "stocknet" / "price")
    return tmp_path


@pytest.fixture
def desk(db: None) -> None:
    """AAPL has statements and prices, MSFT prices only, KO a news item only."""
    revenue_fact(company())
    company("MSFT", "Microsoft", 789019)
    company("KO", "Coca-Cola", 21344)
    SourceDocument.objects.create(
        doc_id="news:0000000000cc", kind="news", title="Coke", url="https://example.org/", tickers=["KO"]
    )


def facts_page(client: Client, snapshot: Path, query: str = "") -> str:
    with override_settings(SNAPSHOT_DIR=snapshot):
        response = client.get(f"/facts/{query}")
    assert response.status_code == 200
    return response.content.decode()


def tickers_in(page: str) -> set[str]:
    return {ticker for ticker in ("AAPL", "MSFT", "KO") if f'<td class="ticker">{ticker}</td>' in page}


@pytest.mark.usefixtures("desk")
def test_the_page_counts_each_kind_and_a_stocknet_price_file_is_price_history(
    client: Client, alice: User, snapshot: Path
) -> None:
    client.force_login(alice)
    page = facts_page(client, snapshot)
    assert "3 companies · 1 with statements · 2 with prices · 1 with documents" in text_of(page)
    assert tickers_in(page) == {"AAPL", "MSFT", "KO"}
    microsoft = row_of(page, "MSFT")
    assert "daily prices 2012-09-04 to 2017-09-01" in microsoft and "no price history" not in microsoft
    assert "no price history bundled" in row_of(page, "KO")


@pytest.mark.usefixtures("desk")
def test_the_filters_combine_and_say_so_when_nothing_matches(
    client: Client, alice: User, snapshot: Path
) -> None:
    client.force_login(alice)
    assert tickers_in(facts_page(client, snapshot, "?prices=1")) == {"AAPL", "MSFT"}
    assert tickers_in(facts_page(client, snapshot, "?statements=1")) == {"AAPL"}
    assert tickers_in(facts_page(client, snapshot, "?documents=1")) == {"KO"}
    both = facts_page(client, snapshot, "?prices=1&statements=1")
    assert tickers_in(both) == {"AAPL"}
    assert "1 of 3 companies has statements and has prices." in text_of(both)
    assert 'name="statements" value="1" checked' in both and 'name="documents" value="1" checked' not in both
    none = facts_page(client, snapshot, "?documents=1&statements=1")
    assert tickers_in(none) == set() and "No company matches these filters." in none
    # The counts at the top stay the whole store's, whatever the filter.
    assert "3 companies · 1 with statements · 2 with prices · 1 with documents" in text_of(none)


def test_the_store_left_the_home_page_which_links_to_it(client: Client, alice: User) -> None:
    revenue_fact(company())
    assert client.get("/facts/").status_code == 302  # to the login
    client.force_login(alice)
    home = client.get("/").content.decode()
    assert home.count('href="/facts/"') == 2  # the nav's link and the home page's
    assert "AAPL:revenue:FY2024" not in home and 'id="fact-store"' not in home
    assert "AAPL:revenue:FY2024" in client.get("/facts/").content.decode()
