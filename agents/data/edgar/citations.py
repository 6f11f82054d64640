"""Addresses on sec.gov a person can open to check a figure."""

from __future__ import annotations

from urllib.parse import urlencode

ARCHIVES = "https://www.sec.gov/Archives/edgar/data"


def filing_index_url(cik: int, accession: str) -> str:
    """The filing's index page, listing every document of the filing."""
    return f"{ARCHIVES}/{cik}/{accession.replace('-', '')}/{accession}-index.htm"


def filing_document_url(cik: int, accession: str, document: str) -> str:
    return f"{ARCHIVES}/{cik}/{accession.replace('-', '')}/{document}"


def company_filings_url(cik: int, form: str) -> str:
    """The company's filings of one form on EDGAR: the best address when the accession is not known."""
    query = urlencode(
        {"action": "getcompany", "CIK": f"{cik:010d}", "type": form, "owner": "include", "count": 40}
    )
    return f"https://www.sec.gov/cgi-bin/browse-edgar?{query}"
