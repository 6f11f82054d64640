"""SEC EDGAR facts: companyfacts and inline XBRL into cited Facts, submissions into filing rows.

Every figure is a ``Fact`` with a stable id (``AAPL:revenue:FY2024``, ``AAPL:revenue:FY2025Q2``) and a
citation of the filing that first reported it; derived figures name their formula and input fact ids.
"""

from agents.data.edgar.company import load_company_facts, load_company_filings, resolve_ticker
from agents.data.edgar.companyfacts import facts_from_companyfacts, read_companyfacts_file
from agents.data.edgar.derived import DERIVED_METRICS
from agents.data.edgar.factset import CompanyFactSet, FiscalYear
from agents.data.edgar.inline_xbrl import facts_from_inline_xbrl
from agents.data.edgar.metrics import METRICS, METRICS_BY_NAME, Metric
from agents.data.edgar.sources import (
    DocumentUnavailable,
    EdgarSource,
    LiveEdgarSource,
    SnapshotEdgarSource,
    TickerMap,
)
from agents.data.edgar.submissions import FilingRow, by_accession, filings_from_submissions, find_report

__all__ = [
    "DERIVED_METRICS",
    "METRICS",
    "METRICS_BY_NAME",
    "CompanyFactSet",
    "DocumentUnavailable",
    "EdgarSource",
    "FilingRow",
    "FiscalYear",
    "LiveEdgarSource",
    "Metric",
    "SnapshotEdgarSource",
    "TickerMap",
    "by_accession",
    "facts_from_companyfacts",
    "facts_from_inline_xbrl",
    "filings_from_submissions",
    "find_report",
    "load_company_facts",
    "load_company_filings",
    "read_companyfacts_file",
    "resolve_ticker",
]
