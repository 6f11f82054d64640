"""The fact store's page says, company by company, what the desk holds: read from the rows and the snapshot's
files as they are now, and honest about what is missing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils.html import strip_tags

from memos.models import SourceDocument
from tests.conftest import ROOT
from tests.memos.factories import company, revenue_fact

PRICES = ROOT / "data" / "snapshot" / "prices" / "daily"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", strip_tags(html))


def row_of(page: str, ticker: str) -> str:
    """The text of the fact store's row for ``ticker``."""
    rows = [text_of(row) for row in page.split("<tr>") if f'<td class="ticker">{ticker}</td>' in row]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    """A snapshot folder with AAPL's price file and a 10-K of AAPL's, and nothing for MSFT."""
    (tmp_path / "prices" / "daily").mkdir(parents=True)
    (tmp_path / "edgar" / "filings").mkdir(parents=True)
    shutil.copy(PRICES / "AAPL_2012-2017_stocknet.csv", tmp_path / "prices" / "daily")
    (tmp_path / "edgar" / "filings" / "aapl-10-k-2024-11-01.html.gz").write_bytes(b"")
    return tmp_path


@pytest.mark.django_db
def test_each_company_shows_its_years_prices_news_and_filings_or_says_it_has_none(
    client: Client, alice: User, snapshot: Path
) -> None:
    apple = company()
    for year in (2023, 2024):
        revenue_fact(apple, year=year)
    company("MSFT", "Microsoft", 789019)
    SourceDocument.objects.create(
        doc_id="news:0000000000aa",
        kind="news",
        title="Apple ships",
        url="https://example.org/",
        tickers=["AAPL"],
    )
    SourceDocument.objects.create(
        doc_id="market:0000000000bb",
        kind="prediction-market",
        title="Apple the largest company in July?",
        url="https://example.org/market",
        tickers=["AAPL"],
    )
    client.force_login(alice)
    with override_settings(SNAPSHOT_DIR=snapshot):
        page = client.get("/facts/").content.decode()

    apple_row = row_of(page, "AAPL")
    assert "filed statements FY2023–FY2024 (2 years, latest FY2024)" in apple_row
    assert "daily prices 2012-09-04 to 2017-09-01" in apple_row
    assert "1 news item, 1 prediction market" in apple_row
    assert "filing 10-K 2024-11-01" in apple_row
    microsoft_row = row_of(page, "MSFT")
    for missing in ("no filed statements", "no price history bundled", "no news items"):
        assert missing in microsoft_row
    assert "no filing documents bundled" in microsoft_row
    # No annual statements: the figure columns say so, not "not reported" (which would mean not filed).
    assert "no annual statements in the desk" in microsoft_row and "not reported" not in microsoft_row


@pytest.mark.django_db
def test_a_file_added_to_the_snapshot_shows_on_the_next_visit(
    client: Client, alice: User, snapshot: Path
) -> None:
    company("MSFT", "Microsoft", 789019)
    client.force_login(alice)
    with override_settings(SNAPSHOT_DIR=snapshot):
        assert "no price history bundled" in row_of(client.get("/facts/").content.decode(), "MSFT")
        shutil.copy(PRICES / "MSFT_2012-2017_stocknet.csv", snapshot / "prices" / "daily")
        (snapshot / "edgar" / "filings" / "msft-10-q-2025-04-30.html.gz").write_bytes(b"")
        row = row_of(client.get("/facts/").content.decode(), "MSFT")
    assert "daily prices 2012-09-04 to 2017-09-01" in row and "filing 10-Q 2025-04-30" in row


@pytest.mark.django_db
def test_a_price_file_that_does_not_read_is_named_as_such(
    client: Client, alice: User, snapshot: Path
) -> None:
    company("MSFT", "Microsoft", 789019)
    (snapshot / "prices" / "daily" / "MSFT.csv").write_text("not,a,price,file\n1,2,3,4\n")
    client.force_login(alice)
    with override_settings(SNAPSHOT_DIR=snapshot):
        row = row_of(client.get("/facts/").content.decode(), "MSFT")
    assert "price file unreadable" in row and "daily prices" not in row
