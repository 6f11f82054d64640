"""Submissions JSON into filing rows, and the cross-check of companyfacts accessions against them."""

from __future__ import annotations

from datetime import date

import pytest

from agents.data.edgar import (
    by_accession,
    facts_from_companyfacts,
    filings_from_submissions,
    read_companyfacts_file,
)
from agents.data.edgar.sources import read_json_file
from agents.data.errors import MalformedData
from tests.agents.data import shared_file

AAPL_SUBMISSIONS = "edgar/submissions/CIK0000320193_AAPL.json"
TSLA_PAGE = "edgar/submissions/CIK0001318605-submissions-001_TSLA.json"


def test_aapl_fy2024_10k_row() -> None:
    rows = by_accession(filings_from_submissions(read_json_file(shared_file(AAPL_SUBMISSIONS))))
    row = rows["0000320193-24-000123"]
    assert (row.form, row.filing_date, row.report_date) == ("10-K", date(2024, 11, 1), date(2024, 9, 28))
    assert row.cik == 320193  # "0000320193" in the document
    assert row.primary_document == "aapl-20240928.htm"
    assert row.url == "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm"
    assert row.index_url.endswith("/000032019324000123/0000320193-24-000123-index.htm")


def test_every_recent_companyfacts_citation_is_a_filing_in_submissions() -> None:
    rows = by_accession(filings_from_submissions(read_json_file(shared_file(AAPL_SUBMISSIONS))))
    oldest_listed = min(row.filing_date for row in rows.values())
    payload = read_companyfacts_file(shared_file("edgar/companyfacts/CIK0000320193_AAPL.json.gz"))
    citations = [
        fact.citation
        for fact in facts_from_companyfacts(payload, ticker="AAPL").facts
        if fact.citation.source == "sec-companyfacts"
        and fact.citation.filed
        and fact.citation.filed >= oldest_listed
    ]
    assert len(citations) > 300
    for citation in citations:
        row = rows[citation.accession or ""]
        assert (row.form, row.filing_date) == (citation.form, citation.filed)
        assert row.index_url == citation.url


def test_a_page_of_older_filings_has_no_header_and_needs_the_cik() -> None:
    page = read_json_file(shared_file(TSLA_PAGE))
    rows = filings_from_submissions(page, cik=1318605)
    assert len(rows) == 720
    assert min(row.filing_date for row in rows) == date(2005, 2, 17)
    assert max(row.filing_date for row in rows) == date(2018, 2, 12)
    assert all(row.cik == 1318605 for row in rows)
    with pytest.raises(MalformedData, match="pass cik="):
        filings_from_submissions(page)


def test_an_older_capture_with_an_unpadded_cik_parses() -> None:
    rows = filings_from_submissions(
        read_json_file(shared_file("edgar/submissions/legacy_2022_CIK0001318605_TSLA_pretty.json"))
    )
    assert len(rows) == 1001
    assert {row.cik for row in rows} == {1318605}


def test_columns_of_different_lengths_are_malformed() -> None:
    payload = {
        "cik": "0000000001",
        "filings": {
            "recent": {
                "accessionNumber": ["0000000001-24-000001", "0000000001-24-000002"],
                "form": ["10-K"],
                "filingDate": ["2024-01-02"],
                "reportDate": [""],
                "primaryDocument": [""],
            }
        },
    }
    with pytest.raises(MalformedData, match="differ in length"):
        filings_from_submissions(payload)
    with pytest.raises(MalformedData, match="columns"):
        filings_from_submissions({"cik": "1", "filings": "none"})
