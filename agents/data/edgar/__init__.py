"""SEC EDGAR facts: companyfacts and inline XBRL into cited Facts, submissions into filing rows.

Every figure is a ``Fact`` with a stable id (``AAPL:revenue:FY2024``, ``AAPL:revenue:FY2025Q2``) and a
citation of the filing that first reported it; derived figures name their formula and input fact ids.
An inline XBRL filing also gives revenue by product line and business segment
(``AAPL:revenue_product_iphone:FY2024``; ``segments.is_segment`` tells such a line from any other fact).
"""

from agents.data.edgar.company import load_company_facts, load_company_filings, resolve_ticker
from agents.data.edgar.companyfacts import facts_from_companyfacts, read_companyfacts_file
from agents.data.edgar.derived import DERIVED_METRICS
from agents.data.edgar.factset import CompanyFactSet, FiscalYear
from agents.data.edgar.inline_xbrl import InlineFiling, facts_from_filing, facts_from_inline_xbrl, read_filing
from agents.data.edgar.metrics import METRICS, METRICS_BY_NAME, Metric
from agents.data.edgar.segments import is_segment, segment_axis, segment_facts, segment_facts_from_inline_xbrl
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
    "InlineFiling",
    "LiveEdgarSource",
    "Metric",
    "SnapshotEdgarSource",
    "TickerMap",
    "by_accession",
    "facts_from_companyfacts",
    "facts_from_filing",
    "facts_from_inline_xbrl",
    "filings_from_submissions",
    "find_report",
    "is_segment",
    "load_company_facts",
    "load_company_filings",
    "read_companyfacts_file",
    "read_filing",
    "resolve_ticker",
    "segment_axis",
    "segment_facts",
    "segment_facts_from_inline_xbrl",
]
