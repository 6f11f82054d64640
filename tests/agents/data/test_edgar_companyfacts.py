"""companyfacts JSON into cited facts, checked against the spot values in ../shared/data/PROVENANCE.md."""

from __future__ import annotations

import gzip
import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from agents.data.edgar import CompanyFactSet, facts_from_companyfacts, read_companyfacts_file
from agents.data.edgar.metrics import METRICS_BY_NAME
from agents.data.errors import DataError, MalformedData, UnsupportedFiler
from agents.data.types import Fact
from tests.agents.data import shared_file

COMPANYFACTS = {
    "AAPL": "edgar/companyfacts/CIK0000320193_AAPL.json.gz",
    "NVDA": "edgar/companyfacts/CIK0001045810_NVDA.json.gz",
    "TSLA": "edgar/companyfacts/CIK0001318605_TSLA.json.gz",
    "TSM": "edgar/companyfacts/CIK0001046179_TSM.json.gz",
}
KEY_CONCEPTS = {
    "AAPL": "edgar/companyfacts/key_concepts/CIK0000320193_AAPL_key_concepts.json",
    "NVDA": "edgar/companyfacts/key_concepts/CIK0001045810_NVDA_key_concepts.json",
    "TSLA": "edgar/companyfacts/key_concepts/CIK0001318605_TSLA_key_concepts.json",
}


def parse(ticker: str, files: dict[str, str] = COMPANYFACTS) -> CompanyFactSet:
    return facts_from_companyfacts(read_companyfacts_file(shared_file(files[ticker])), ticker=ticker)


@pytest.fixture(scope="module")
def aapl() -> dict[str, Fact]:
    return parse("AAPL").facts_by_id()


@pytest.fixture(scope="module")
def nvda() -> dict[str, Fact]:
    return parse("NVDA").facts_by_id()


@pytest.fixture(scope="module")
def tsla() -> dict[str, Fact]:
    return parse("TSLA").facts_by_id()


@pytest.fixture(scope="module")
def tsm() -> CompanyFactSet:
    return parse("TSM")


def test_aapl_fy2024_revenue_cites_the_original_10k(aapl: dict[str, Fact]) -> None:
    revenue = aapl["AAPL:revenue:FY2024"]
    assert revenue.value == Decimal(391035000000)
    assert revenue.unit == "USD"
    assert (revenue.period_start, revenue.period_end) == (date(2023, 10, 1), date(2024, 9, 28))
    assert (revenue.fiscal_year, revenue.fiscal_period) == (2024, "FY")
    citation = revenue.citation
    assert citation.source == "sec-companyfacts"
    assert (citation.accession, citation.form, citation.filed) == (
        "0000320193-24-000123",
        "10-K",
        date(2024, 11, 1),
    )
    assert citation.concept == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
    assert citation.url == (
        "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/0000320193-24-000123-index.htm"
    )


def test_aapl_annual_figures_match_the_10k(aapl: dict[str, Fact]) -> None:
    assert aapl["AAPL:revenue:FY2023"].value == 383285000000
    assert aapl["AAPL:revenue:FY2022"].value == 394328000000
    assert aapl["AAPL:net_income:FY2024"].value == 93736000000
    assert aapl["AAPL:eps_diluted:FY2024"].value == Decimal("6.08")
    assert aapl["AAPL:eps_diluted:FY2024"].unit == "USD/shares"


def test_a_comparative_in_a_later_10k_does_not_replace_the_original_citation(aapl: dict[str, Fact]) -> None:
    # FY2022 revenue is repeated in the FY2023 and FY2024 10-Ks; the fact cites the FY2022 10-K.
    citation = aapl["AAPL:revenue:FY2022"].citation
    assert citation.filed == date(2022, 10, 28)
    assert citation.accession == "0000320193-22-000108"


def test_aapl_q2_fy25_is_the_quarter_ending_in_march_2025(aapl: dict[str, Fact]) -> None:
    revenue, net_income = aapl["AAPL:revenue:FY2025Q2"], aapl["AAPL:net_income:FY2025Q2"]
    assert revenue.value == 95359000000
    assert net_income.value == 24780000000
    assert (revenue.period_start, revenue.period_end) == (date(2024, 12, 29), date(2025, 3, 29))
    assert revenue.fiscal_period == "Q2"
    assert revenue.citation.form == "10-Q"


def test_older_aapl_years_fall_back_to_sales_revenue_net(aapl: dict[str, Fact]) -> None:
    assert aapl["AAPL:revenue:FY2012"].citation.concept == "us-gaap:SalesRevenueNet"
    assert aapl["AAPL:revenue:FY2012"].value == 156508000000
    assert (
        aapl["AAPL:revenue:FY2020"].citation.concept
        == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
    )
    revenue_years = [
        fact.fiscal_year for fact in aapl.values() if fact.metric == "revenue" and fact.fiscal_period == "FY"
    ]
    assert revenue_years == list(range(2007, 2026))


def test_balance_sheet_figures_are_taken_at_the_fiscal_year_end(aapl: dict[str, Fact]) -> None:
    assets = aapl["AAPL:total_assets:FY2024"]
    assert (assets.period_start, assets.period_end) == (None, date(2024, 9, 28))
    assert assets.value == 364980000000
    assert aapl["AAPL:total_liabilities:FY2024"].value == 308030000000
    assert aapl["AAPL:cash:FY2024"].value == 29943000000
    shares = aapl["AAPL:shares_outstanding:FY2024"]
    assert (shares.value, shares.unit) == (Decimal(15116786000), "shares")
    assert shares.citation.concept == "us-gaap:CommonStockSharesOutstanding"


def test_nvda_fiscal_years_are_named_for_the_calendar_year_they_end_in(nvda: dict[str, Fact]) -> None:
    assert nvda["NVDA:revenue:FY2025"].value == 130497000000
    assert nvda["NVDA:revenue:FY2024"].value == 60922000000
    assert nvda["NVDA:revenue:FY2026"].period_end == date(2026, 1, 25)
    assert nvda["NVDA:revenue:FY2026"].citation.concept == "us-gaap:Revenues"
    quarter = nvda["NVDA:revenue:FY2026Q2"]
    assert quarter.value == 46743000000
    assert (quarter.period_start, quarter.period_end) == (date(2025, 4, 28), date(2025, 7, 27))


def test_total_liabilities_is_not_computed_when_the_filer_did_not_tag_it(nvda: dict[str, Fact]) -> None:
    # NVIDIA tags us-gaap:Liabilities only from FY2015: earlier years have assets and equity, no liabilities.
    assert "NVDA:total_assets:FY2012" in nvda
    assert "NVDA:stockholders_equity:FY2012" in nvda
    assert "NVDA:total_liabilities:FY2012" not in nvda
    assert "NVDA:total_liabilities:FY2015" in nvda


def test_tsla_2021_revenue(tsla: dict[str, Fact]) -> None:
    assert tsla["TSLA:revenue:FY2021"].value == 53823000000
    assert tsla["TSLA:revenue:FY2021"].period_end == date(2021, 12, 31)


def test_precision_drift_keeps_the_value_first_filed(tsla: dict[str, Fact]) -> None:
    # FY2018 Revenues: 21,461,268,000 in the FY2018 10-K, 21,461,000,000 in later 10-Ks (in millions).
    revenue = tsla["TSLA:revenue:FY2018"]
    assert revenue.value == 21461268000
    assert (revenue.citation.form, revenue.citation.filed) == ("10-K", date(2019, 2, 19))


def test_tsm_is_read_in_its_reporting_currency_from_ifrs(tsm: CompanyFactSet) -> None:
    facts = tsm.facts_by_id()
    revenue = facts["TSM:revenue:FY2024"]
    assert revenue.value == Decimal("2894307700000")  # TWD 2,894,307.7 million
    assert revenue.unit == "TWD"
    assert (revenue.citation.concept, revenue.citation.form) == ("ifrs-full:Revenue", "20-F")
    assert tsm.taxonomy == "ifrs-full"
    assert (
        facts["TSM:net_income:FY2024"].citation.concept == "ifrs-full:ProfitLossAttributableToOwnersOfParent"
    )
    assert facts["TSM:eps_diluted:FY2024"].unit == "TWD/shares"
    assert {fact.fiscal_period for fact in tsm.facts} == {"FY"}
    assert {fact.unit for fact in tsm.facts} <= {"TWD", "TWD/shares", "pure"}


def test_fiscal_years_group_annual_and_derived_facts_newest_last(aapl: dict[str, Fact]) -> None:
    years = parse("AAPL").fiscal_years()
    assert [year.fiscal_year for year in years] == sorted(year.fiscal_year for year in years)
    latest = {year.fiscal_year: year for year in years}[2024]
    assert (latest.period_start, latest.period_end) == (date(2023, 10, 1), date(2024, 9, 28))
    assert latest.metrics["revenue"] == aapl["AAPL:revenue:FY2024"]
    assert latest.metrics["gross_margin"].citation.source == "derived"
    assert set(METRICS_BY_NAME) <= set(latest.metrics)


def test_fact_ids_are_unique_and_stable_across_parses() -> None:
    first, second = parse("NVDA"), parse("NVDA")
    ids = [fact.fact_id for fact in first.facts]
    assert len(ids) == len(set(ids))
    assert first.facts == second.facts
    pattern = re.compile(r"NVDA:(?P<metric>[a-z0-9_]+):FY(?P<year>\d{4})(?P<quarter>Q[1-4])?")
    for fact in first.facts:
        match = pattern.fullmatch(fact.fact_id)
        assert match, fact.fact_id
        assert (match["metric"], int(match["year"])) == (fact.metric, fact.fiscal_year)
        assert (match["quarter"] or "FY") == fact.fiscal_period


@pytest.mark.parametrize("ticker", sorted(KEY_CONCEPTS))
def test_the_key_concept_subsets_give_the_same_answers_as_the_full_files(ticker: str) -> None:
    full, subset = parse(ticker).facts_by_id(), parse(ticker, KEY_CONCEPTS).facts_by_id()
    subset_concepts = {fact.citation.concept for fact in subset.values() if fact.citation.concept}
    # Everything the subset says, the full file says identically (value, period, citation)...
    assert {fact_id: full.get(fact_id) for fact_id in subset} == subset
    # ...and every filed figure of the full file that rests on a concept the subset carries is in the subset.
    missing = [
        fact_id
        for fact_id, fact in full.items()
        if fact.citation.concept in subset_concepts and fact_id not in subset
    ]
    assert missing == []
    assert len(subset) > 500


def test_facts_are_named_by_cik_when_no_ticker_is_given() -> None:
    payload = read_companyfacts_file(shared_file(COMPANYFACTS["TSM"]))
    fact_set = facts_from_companyfacts(payload)
    assert fact_set.ticker == "CIK0001046179"
    assert "CIK0001046179:revenue:FY2024" in fact_set.facts_by_id()


def test_the_largest_file_parses_into_cited_facts() -> None:
    # How fast is a figure, not a rule: tests/bench/test_foundation_bench.py prints it (scripts/bench.sh).
    fact_set = facts_from_companyfacts(
        read_companyfacts_file(shared_file(COMPANYFACTS["NVDA"])), ticker="NVDA"
    )
    assert len(fact_set.facts) > 900
    assert all(fact.citation.url.startswith("https://www.sec.gov/") for fact in fact_set.facts)


def test_a_missing_file_is_a_data_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file") as caught:
        read_companyfacts_file(tmp_path / "CIK0000000001_NONE.json")
    assert str(tmp_path) in str(caught.value)


def test_bad_json_and_bad_gzip_are_malformed(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"cik": 1, "facts": ')
    bad_gzip = tmp_path / "bad.json.gz"
    bad_gzip.write_bytes(b"\x1f\x8b" + b"not really gzip")
    for path in (bad_json, bad_gzip):
        with pytest.raises(MalformedData, match="not valid JSON"):
            read_companyfacts_file(path)


def test_json_of_another_shape_is_malformed(tmp_path: Path) -> None:
    tickers = tmp_path / "list.json.gz"
    tickers.write_bytes(gzip.compress(json.dumps([1, 2, 3]).encode()))
    with pytest.raises(MalformedData, match="not companyfacts"):
        read_companyfacts_file(tickers)
    with pytest.raises(MalformedData, match="'cik' and a 'facts' object"):
        facts_from_companyfacts({"entityName": "Nobody", "facts": []})


def test_a_filer_without_us_gaap_or_ifrs_is_refused() -> None:
    payload = {"cik": 1, "entityName": "Cover Page Only Inc.", "facts": {"dei": {"EntityPublicFloat": {}}}}
    with pytest.raises(UnsupportedFiler, match="neither us-gaap nor ifrs-full"):
        facts_from_companyfacts(payload, ticker="COVR")
