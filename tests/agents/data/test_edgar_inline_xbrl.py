"""Inline XBRL filings into facts: real 10-Qs and a 10-K, plus a small document for the number formats."""

from __future__ import annotations

import gzip
from datetime import date
from decimal import Decimal

import pytest

from agents.data.edgar import (
    CompanyFactSet,
    facts_from_companyfacts,
    facts_from_inline_xbrl,
    filings_from_submissions,
    find_report,
    inline_xbrl,
    read_companyfacts_file,
)
from agents.data.edgar.sources import read_json_file
from agents.data.errors import MalformedData
from agents.data.types import Fact
from tests.agents.data import shared_file

FILINGS = {
    "KO": "edgar/filings/ko-10-q-2025-07-24.html.gz",
    "AAPL": "edgar/filings/aapl-10-q-2025-08-01.html.gz",
    "NVDA": "edgar/filings/nvda-10-q-2025-08-27.html.gz",
    "TSLA": "edgar/filings/tsla-10-q-2025-07-24.html.gz",
}


def inline(ticker: str, relative: str | None = None) -> CompanyFactSet:
    return facts_from_inline_xbrl(shared_file(relative or FILINGS[ticker]).read_bytes(), ticker=ticker)


def companyfacts(relative: str, ticker: str) -> dict[str, Fact]:
    return facts_from_companyfacts(read_companyfacts_file(shared_file(relative)), ticker=ticker).facts_by_id()


def test_ko_second_quarter_2025_totals() -> None:
    ko = inline("KO")
    facts = ko.facts_by_id()
    revenue, net_income = facts["KO:revenue:FY2025Q2"], facts["KO:net_income:FY2025Q2"]
    assert revenue.value == 12535000000
    assert net_income.value == 3810000000
    assert (revenue.period_start, revenue.period_end) == (date(2025, 3, 29), date(2025, 6, 27))
    assert (revenue.fiscal_year, revenue.fiscal_period) == (2025, "Q2")
    assert (revenue.citation.source, revenue.citation.form) == ("sec-inline-xbrl", "10-Q")
    assert revenue.citation.concept == "us-gaap:Revenues"
    assert (ko.cik, ko.entity, ko.taxonomy) == (21344, "COCA COLA CO", "us-gaap")
    # The document's own quarter only: no comparatives, no year-to-date figures, nothing untagged invented.
    assert {fact.fact_id.rsplit(":", 1)[1] for fact in ko.facts} == {"FY2025Q2"}
    assert "KO:total_liabilities:FY2025Q2" not in facts


@pytest.mark.parametrize(
    ("ticker", "fact_id", "value", "period"),
    [
        # Apple's "Products" segment line (66,613) comes before the total; segment contexts are skipped.
        ("AAPL", "AAPL:revenue:FY2025Q3", 94036000000, (date(2025, 3, 30), date(2025, 6, 28))),
        ("NVDA", "NVDA:revenue:FY2026Q2", 46743000000, (date(2025, 4, 28), date(2025, 7, 27))),
        ("TSLA", "TSLA:revenue:FY2025Q2", 22496000000, (date(2025, 4, 1), date(2025, 6, 30))),
    ],
)
def test_quarterly_revenue_from_10q_documents(
    ticker: str, fact_id: str, value: int, period: tuple[date, date]
) -> None:
    fact = inline(ticker).facts_by_id()[fact_id]
    assert fact.value == value
    assert (fact.period_start, fact.period_end) == period


@pytest.mark.parametrize(
    ("ticker", "relative", "fact_id"),
    [
        ("AAPL", "edgar/companyfacts/CIK0000320193_AAPL.json.gz", "AAPL:revenue:FY2025Q3"),
        ("NVDA", "edgar/companyfacts/CIK0001045810_NVDA.json.gz", "NVDA:revenue:FY2026Q2"),
    ],
)
def test_both_routes_give_the_same_quarter_the_same_ids_and_values(
    ticker: str, relative: str, fact_id: str
) -> None:
    from_document, from_api = inline(ticker).facts_by_id(), companyfacts(relative, ticker)
    assert fact_id in from_document and fact_id in from_api
    shared = sorted(set(from_document) & set(from_api))
    assert len(shared) >= 5
    for key in shared:
        document_fact, api_fact = from_document[key], from_api[key]
        assert (document_fact.value, document_fact.period_start, document_fact.period_end) == (
            api_fact.value,
            api_fact.period_start,
            api_fact.period_end,
        ), key


def test_a_10k_document_gives_the_fiscal_year_with_derived_figures() -> None:
    annual = inline("AAPL", "edgar/filings/aapl-10-k-2024-11-01.html.gz").facts_by_id()
    api = companyfacts("edgar/companyfacts/CIK0000320193_AAPL.json.gz", "AAPL")
    assert annual["AAPL:revenue:FY2024"].value == 391035000000
    assert annual["AAPL:net_income:FY2024"].value == 93736000000
    for fact_id, fact in annual.items():
        assert fact.value == api[fact_id].value, fact_id
    assert annual["AAPL:gross_margin:FY2024"].inputs == ("AAPL:gross_profit:FY2024", "AAPL:revenue:FY2024")


def test_the_accession_found_in_submissions_matches_the_companyfacts_citation() -> None:
    rows = filings_from_submissions(read_json_file(shared_file("edgar/submissions/CIK0000320193_AAPL.json")))
    filing = find_report(rows, form="10-Q", report_date=date(2025, 6, 28))
    assert filing is not None
    raw = shared_file(FILINGS["AAPL"]).read_bytes()
    fact = facts_from_inline_xbrl(
        raw, ticker="AAPL", accession=filing.accession, filed=filing.filing_date
    ).facts[0]
    api_fact = companyfacts("edgar/companyfacts/CIK0000320193_AAPL.json.gz", "AAPL")[fact.fact_id]
    assert (fact.citation.accession, fact.citation.filed) == (
        api_fact.citation.accession,
        api_fact.citation.filed,
    )
    assert fact.citation.url == api_fact.citation.url == filing.index_url


def test_without_an_accession_the_citation_points_at_the_companys_filings_of_that_form() -> None:
    citation = inline("KO").facts[0].citation
    assert citation.accession is None
    assert citation.url.startswith(
        "https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000021344"
    )
    assert "type=10-Q" in citation.url


def test_text_and_gzip_input_give_the_same_facts() -> None:
    compressed = shared_file(FILINGS["TSLA"]).read_bytes()
    as_text = gzip.decompress(compressed).decode("utf-8")
    assert facts_from_inline_xbrl(as_text, ticker="tsla") == facts_from_inline_xbrl(compressed, ticker="TSLA")


@pytest.mark.parametrize(
    ("ticker", "quarter"),
    [("KO", "FY2025Q2"), ("AAPL", "FY2025Q3"), ("NVDA", "FY2026Q2"), ("TSLA", "FY2025Q2")],
)
def test_each_10q_gives_only_its_own_quarter_under_its_ticker(ticker: str, quarter: str) -> None:
    # How fast each parses is a figure, not a rule: tests/bench/test_parsing_bench.py prints it.
    facts = inline(ticker).facts
    assert facts
    assert {fact.fact_id.split(":")[0] for fact in facts} == {ticker}
    assert {fact.fact_id.rsplit(":", 1)[1] for fact in facts} == {quarter}
    assert {(fact.citation.source, fact.citation.form) for fact in facts} == {("sec-inline-xbrl", "10-Q")}


SMALL_FILING = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
      xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
      xmlns:ixt="http://www.xbrl.org/inlineXBRL/transformation/2020-02-12"
      xmlns:iso4217="http://www.xbrl.org/2003/iso4217" xmlns:us-gaap="http://fasb.org/us-gaap/2024"
      xmlns:dei="http://xbrl.sec.gov/dei/2024" xmlns:srt="http://fasb.org/srt/2024"
      xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><body>
<div style="display:none"><ix:header><ix:resources>
 <xbrli:context id="q"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier>
  </xbrli:entity><xbrli:period><xbrli:startDate>2025-04-01</xbrli:startDate><xbrli:endDate>2025-06-30</xbrli:endDate>
  </xbrli:period></xbrli:context>
 <xbrli:context id="ytd"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier>
  </xbrli:entity><xbrli:period><xbrli:startDate>2025-01-01</xbrli:startDate><xbrli:endDate>2025-06-30</xbrli:endDate>
  </xbrli:period></xbrli:context>
 <xbrli:context id="now"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier>
  </xbrli:entity><xbrli:period><xbrli:instant>2025-06-30</xbrli:instant></xbrli:period></xbrli:context>
 <xbrli:context id="segment"><xbrli:entity>
  <xbrli:identifier scheme="http://www.sec.gov/CIK">0000000042</xbrli:identifier><xbrli:segment>
  <xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">srt:ProductMember</xbrldi:explicitMember>
  </xbrli:segment></xbrli:entity><xbrli:period><xbrli:startDate>2025-04-01</xbrli:startDate>
  <xbrli:endDate>2025-06-30</xbrli:endDate></xbrli:period></xbrli:context>
 <xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
 <xbrli:unit id="usdPerShare"><xbrli:divide><xbrli:unitNumerator><xbrli:measure>iso4217:USD</xbrli:measure>
  </xbrli:unitNumerator><xbrli:unitDenominator><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unitDenominator>
  </xbrli:divide></xbrli:unit>
</ix:resources></ix:header></div>
<p><ix:nonNumeric name="dei:DocumentType" contextRef="ytd">10-Q</ix:nonNumeric>
 <ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="ytd">2025</ix:nonNumeric>
 <ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="ytd">Q2</ix:nonNumeric>
 <ix:nonNumeric name="dei:CurrentFiscalYearEndDate" contextRef="ytd">--12-31</ix:nonNumeric>
 <ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="ytd">0000000042</ix:nonNumeric>
 <ix:nonNumeric name="dei:EntityRegistrantName" contextRef="ytd">Example&#160;Corp</ix:nonNumeric></p>
<p>Products <ix:nonFraction name="us-gaap:Revenues" contextRef="segment" unitRef="usd"
   scale="6">700</ix:nonFraction>
 Total <ix:nonFraction name="us-gaap:Revenues" contextRef="q" unitRef="usd" scale="6"
   format="ixt:num-dot-decimal">1,250.5</ix:nonFraction>
 Year to date <ix:nonFraction name="us-gaap:Revenues" contextRef="ytd" unitRef="usd"
   scale="6">2,400</ix:nonFraction>
 Net loss (<ix:nonFraction name="us-gaap:NetIncomeLoss" contextRef="q" unitRef="usd" scale="3"
   sign="-">4,321</ix:nonFraction>)
 EPS (<ix:nonFraction name="us-gaap:EarningsPerShareDiluted" contextRef="q" unitRef="usdPerShare"
   sign="-">0.05</ix:nonFraction>)
 Operating income <ix:nonFraction name="us-gaap:OperatingIncomeLoss" contextRef="q" unitRef="usd" scale="3"
   format="ixt:num-comma-decimal">1.234,5</ix:nonFraction>
 R&amp;D <ix:nonFraction name="us-gaap:ResearchAndDevelopmentExpense" contextRef="q" unitRef="usd" scale="6"
   format="ixt:fixed-zero">&#8212;</ix:nonFraction>
 Gross profit <ix:nonFraction name="us-gaap:GrossProfit" contextRef="q" unitRef="usd" xsi:nil="true"/>
 Cash <ix:nonFraction name="us-gaap:CashAndCashEquivalentsAtCarryingValue" contextRef="now" unitRef="usd"
   scale="6"><span>9</span>,590</ix:nonFraction></p>
</body></html>
"""


def test_scale_sign_formats_and_segments_are_applied() -> None:
    fact_set = facts_from_inline_xbrl(SMALL_FILING, ticker="EXMP")
    values = {fact.metric: fact.value for fact in fact_set.facts}
    assert values == {
        "revenue": Decimal(1250500000),  # the total, not the segment line before it, nor year to date
        "net_income": Decimal(-4321000),
        "eps_diluted": Decimal("-0.05"),
        "operating_income": Decimal(1234500),
        "rnd_expense": Decimal(0),
        "cash": Decimal(9590000000),  # text split across a nested span
    }
    assert (fact_set.cik, fact_set.entity) == (42, "Example Corp")
    assert fact_set.facts_by_id()["EXMP:revenue:FY2025Q2"].period_start == date(2025, 4, 1)
    assert fact_set.facts_by_id()["EXMP:eps_diluted:FY2025Q2"].unit == "USD/shares"


def test_a_document_that_is_not_xml_is_malformed() -> None:
    with pytest.raises(MalformedData, match="not a well-formed inline XBRL"):
        facts_from_inline_xbrl(b"<html><body><p>unclosed", ticker="BAD")


def test_a_gzip_bomb_or_a_nesting_bomb_is_refused_without_taking_the_workers_memory() -> None:
    """Issue 31 L13: the parser read any size (huge_tree) and gunzipped without a cap."""
    bomb = gzip.compress(b"<html>" + b" " * (inline_xbrl.MAX_FILING_BYTES + 1) + b"</html>")
    assert len(bomb) < 200_000  # a few hundred kB on the wire
    with pytest.raises(MalformedData, match="unpacks to over"):
        facts_from_inline_xbrl(bomb, ticker="AAPL")
    nested = b"<html>" + b"<div>" * 10_000 + b"</div>" * 10_000 + b"</html>"
    with pytest.raises(MalformedData, match="not a well-formed inline XBRL"):
        facts_from_inline_xbrl(nested, ticker="AAPL")


def test_a_document_without_dei_cover_facts_is_malformed() -> None:
    without_type = SMALL_FILING.replace('name="dei:DocumentType"', 'name="dei:Other"')
    with pytest.raises(MalformedData, match="dei:DocumentType"):
        facts_from_inline_xbrl(without_type, ticker="BAD")


def test_a_value_that_is_not_a_number_is_malformed() -> None:
    garbled = SMALL_FILING.replace(">1,250.5<", ">twelve<")
    with pytest.raises(MalformedData, match="us-gaap:Revenues"):
        facts_from_inline_xbrl(garbled, ticker="BAD")
