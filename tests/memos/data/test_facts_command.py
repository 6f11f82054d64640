"""``manage.py facts``: tables and JSON from the snapshot, a file or SEC, and exit status 2 on bad input."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from pytest_django.fixtures import Settings

from agents.data.edgar import SnapshotEdgarSource, load_company_facts
from agents.data.edgar.sources import EDGAR_HOSTS, EDGAR_MAX_BYTES
from agents.data.http import FetchError
from agents.data.shared_rate import SharedRateLimiter
from memos.models import Company, FactRecord, RawResponse
from memos.pipeline import data_sources as sources
from memos.pipeline.data_sources import SEC_LIMIT_KEY
from tests.agents.data import REPO_ROOT, SHARED_DATA, shared_file

METRIC_KEYS = {"value", "unit", "concept", "form", "accession", "filed", "url"}


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("facts", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def run_failing(*args: str) -> tuple[int | str | None, str, str]:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as caught:
        call_command("facts", *args, stdout=out, stderr=err)
    return caught.value.code, out.getvalue(), err.getvalue()


def test_json_output_has_the_documented_shape() -> None:
    out, err = run("AAPL", "--data-dir", str(SHARED_DATA), "--json")
    document = json.loads(out)
    assert err == ""
    assert set(document) == {"ticker", "cik", "entity", "fiscal_years"}
    assert (document["ticker"], document["cik"], document["entity"]) == ("AAPL", 320193, "Apple Inc.")
    years = {year["fiscal_year"]: year for year in document["fiscal_years"]}
    assert [year["fiscal_year"] for year in document["fiscal_years"]] == sorted(years)
    fy2024 = years[2024]
    assert (fy2024["period_start"], fy2024["period_end"]) == ("2023-10-01", "2024-09-28")
    revenue = fy2024["metrics"]["revenue"]
    assert set(revenue) == METRIC_KEYS
    assert revenue == {
        "value": 391035000000,
        "unit": "USD",
        "concept": "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
        "form": "10-K",
        "accession": "0000320193-24-000123",
        "filed": "2024-11-01",
        "url": "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/0000320193-24-000123-index.htm",
    }
    assert isinstance(revenue["value"], int)
    assert fy2024["metrics"]["eps_diluted"]["value"] == 6.08
    margin = fy2024["metrics"]["gross_margin"]
    assert margin["value"] == pytest.approx(0.4620634982)
    assert (margin["unit"], margin["concept"], margin["form"]) == ("pure", None, None)
    assert margin["url"] == fy2024["metrics"]["gross_profit"]["url"]  # the first input's filing


def test_the_table_shows_each_fiscal_year_with_citations() -> None:
    out, _ = run("NVDA", "--data-dir", str(SHARED_DATA))
    assert out.startswith("NVDA  NVIDIA CORP  (CIK 1045810, us-gaap)")
    assert "FY2025  2024-01-29 .. 2025-01-26" in out
    revenue_line = next(
        line for line in out.splitlines() if line.startswith("revenue") and "130,497,000,000" in line
    )
    assert "us-gaap:Revenues" in revenue_line
    assert "10-K" in revenue_line
    assert "2024-01-29..2025-01-26" in revenue_line
    assert "derived: NVDA:gross_profit:FY2025 / NVDA:revenue:FY2025" in out


def test_a_ticker_reads_the_configured_snapshot_by_default(settings: Settings) -> None:
    assert settings.DATA_MODE == "snapshot"
    document = json.loads(run("tsla", "--json")[0])
    years = {year["fiscal_year"]: year for year in document["fiscal_years"]}
    assert years[2021]["metrics"]["revenue"]["value"] == 53823000000


def test_a_companyfacts_file_can_be_named_by_a_ticker() -> None:
    path = str(shared_file("edgar/companyfacts/CIK0001046179_TSM.json.gz"))
    document = json.loads(run(path, "--json", "--ticker", "TSM")[0])
    years = {year["fiscal_year"]: year for year in document["fiscal_years"]}
    assert document["ticker"] == "TSM"
    assert years[2024]["metrics"]["revenue"]["value"] == 2894307700000
    assert years[2024]["metrics"]["revenue"]["unit"] == "TWD"
    assert json.loads(run(path, "--json")[0])["ticker"] == "CIK0001046179"


@pytest.mark.django_db
def test_save_hands_every_fact_to_the_fact_store() -> None:
    parsed = load_company_facts(SnapshotEdgarSource(SHARED_DATA), "AAPL").facts_by_id()
    out, err = run("AAPL", "--data-dir", str(SHARED_DATA), "--json", "--save")
    assert err.strip() == f"saved {len(parsed)} facts for AAPL"
    json.loads(out)  # still pure JSON on stdout

    company = Company.objects.get()
    assert (company.ticker, company.cik, company.name, company.taxonomy) == (
        "AAPL",
        320193,
        "Apple Inc.",
        "us-gaap",
    )
    rows = {row.fact_id: row for row in FactRecord.objects.filter(company=company)}
    # Every fact the parser read is a row (annual, quarterly and derived alike), and nothing else is.
    assert set(rows) == set(parsed)
    assert {
        fact_id: (row.value, row.period_end, row.source, row.accession, row.url)
        for fact_id, row in rows.items()
    } == {
        fact_id: (f.value, f.period_end, f.citation.source, f.citation.accession or "", f.citation.url)
        for fact_id, f in parsed.items()
    }
    quarter = rows["AAPL:revenue:FY2025Q2"]  # quarters are stored too, not only the years the table shows
    assert (quarter.value, quarter.fiscal_period, quarter.form, str(quarter.filed)) == (
        Decimal("95359000000"),
        "Q2",
        "10-Q",
        "2025-05-02",
    )
    assert quarter.concept == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
    margin = rows["AAPL:gross_margin:FY2024"]
    assert (margin.value, margin.source, margin.form) == (Decimal("0.4620634982"), "derived", "")
    assert margin.inputs == ["AAPL:gross_profit:FY2024", "AAPL:revenue:FY2024"]

    # Saving again updates the same rows by fact id: no duplicates.
    run("AAPL", "--data-dir", str(SHARED_DATA), "--json", "--save")
    assert FactRecord.objects.count() == len(parsed) and Company.objects.count() == 1


@pytest.mark.django_db
def test_an_unknown_ticker_is_one_line_on_stderr_and_exit_2() -> None:
    code, out, err = run_failing("ZZZZ", "--data-dir", str(SHARED_DATA), "--save")
    assert code == 2
    assert out == ""
    assert err.strip() == "facts: unknown ticker 'ZZZZ': not in SEC's company list"
    assert not Company.objects.exists() and not FactRecord.objects.exists()


def test_a_company_without_companyfacts_exits_2_and_names_the_inline_route() -> None:
    code, _, err = run_failing("KO", "--data-dir", str(SHARED_DATA))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "inline XBRL" in err


@pytest.mark.django_db
def test_a_missing_or_malformed_file_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "CIK0000000001_BROKEN.json.gz"
    broken.write_bytes(gzip.compress(b'{"cik": 1, "facts": {'))
    for target, expected in [(tmp_path / "absent.json", "no such file"), (broken, "not valid JSON")]:
        code, out, err = run_failing(str(target), "--save")
        assert code == 2
        assert out == ""
        assert expected in err
        assert len(err.strip().splitlines()) == 1
    assert not Company.objects.exists() and not FactRecord.objects.exists()


@pytest.mark.django_db
def test_live_mode_asks_sec_with_the_configured_user_agent_and_rate(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = {
        "https://www.sec.gov/files/company_tickers.json": "edgar/reference/company_tickers.json",
        "https://data.sec.gov/api/xbrl/companyfacts/CIK0001045810.json": (
            "edgar/companyfacts/CIK0001045810_NVDA.json.gz"
        ),
    }
    asked: list[str] = []
    configured: dict[str, Any] = {}

    def fake_http_fetcher(**kwargs: Any) -> Any:
        configured.update(kwargs)

        def fetch(url: str) -> bytes:
            asked.append(url)
            if url not in recorded:
                raise FetchError(f"{url} answered HTTP 404")
            raw = shared_file(recorded[url]).read_bytes()
            return gzip.decompress(raw) if recorded[url].endswith(".gz") else raw  # as urllib hands it over

        return fetch

    settings.DATA_MODE = "live"
    monkeypatch.setattr(sources, "http_fetcher", fake_http_fetcher)
    document = json.loads(run("NVDA", "--json")[0])
    limiter = configured.pop("limiter")
    assert configured == {
        "user_agent": settings.SEC_USER_AGENT,
        "per_second": settings.SEC_MAX_REQUESTS_PER_SECOND,
        "allowed_hosts": EDGAR_HOSTS,
        "max_bytes": EDGAR_MAX_BYTES,
    }
    assert isinstance(limiter, SharedRateLimiter) and limiter.key == SEC_LIMIT_KEY  # one limit, every process
    assert asked == list(recorded)
    assert set(RawResponse.objects.values_list("url", flat=True)) == set(recorded)  # what SEC sent, kept
    years = {year["fiscal_year"]: year for year in document["fiscal_years"]}
    assert years[2025]["metrics"]["revenue"]["value"] == 130497000000


def test_the_command_run_as_a_program_exits_2_on_an_unknown_ticker() -> None:
    environment = {**os.environ, "ANALYST_DESK_TESTING": "true"}
    result = subprocess.run(
        [sys.executable, "manage.py", "facts", "ZZZZ", "--data-dir", str(SHARED_DATA)],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == "facts: unknown ticker 'ZZZZ': not in SEC's company list"
