"""SEC submissions JSON (``data.sec.gov/submissions``): the list of a company's filings.

Its ``filings.recent`` block holds the newest ~1,000 filings as parallel arrays (one array per column);
older filings sit in separate pages (``CIK##########-submissions-001.json``) that have the same columns
at the top level and no company header. In this document ``cik`` is a zero-padded string.
Used to cross-check a fact's accession (form, filing date, report date) and to find the accession of an
inline XBRL document, which does not state its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.data.edgar.citations import filing_document_url, filing_index_url
from agents.data.errors import MalformedData

_COLUMNS = ("accessionNumber", "form", "filingDate", "reportDate", "primaryDocument")


class FilingRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    cik: int
    accession: str
    form: str
    filing_date: date
    report_date: date | None
    primary_document: str
    url: str  # the primary document (the filing index when there is none)
    index_url: str


def filings_from_submissions(payload: Mapping[str, Any], *, cik: int | None = None) -> list[FilingRow]:
    """Filing rows, in the document's order (newest first). ``cik`` is required for a page file."""
    if "filings" in payload:
        filings = payload["filings"]
        columns = filings.get("recent") if isinstance(filings, Mapping) else None
    else:
        columns = payload
    filer = _cik(payload.get("cik"), cik)
    if not isinstance(columns, Mapping) or any(not isinstance(columns.get(name), list) for name in _COLUMNS):
        raise MalformedData(f"submissions JSON needs the columns {', '.join(_COLUMNS)} as arrays")
    lengths = {name: len(columns[name]) for name in _COLUMNS}
    if len(set(lengths.values())) != 1:
        raise MalformedData(f"submissions columns differ in length: {lengths}")
    rows = zip(*(columns[name] for name in _COLUMNS), strict=True)
    return [_row(filer, values) for values in rows]


def find_report(rows: Iterable[FilingRow], *, form: str, report_date: date) -> FilingRow | None:
    """The original filing of ``form`` for the period ending ``report_date`` (the earliest filed)."""
    matches = [row for row in rows if row.form == form and row.report_date == report_date]
    return min(matches, key=lambda row: (row.filing_date, row.accession)) if matches else None


def by_accession(rows: Sequence[FilingRow]) -> dict[str, FilingRow]:
    return {row.accession: row for row in rows}


def _cik(raw: Any, fallback: int | None) -> int:
    if raw is None or raw == "":
        if fallback is None:
            raise MalformedData("this submissions page has no company header: pass cik=")
        return fallback
    try:
        return int(raw)
    except (TypeError, ValueError) as exc:
        raise MalformedData(f"submissions JSON has a CIK that is not a number: {raw!r}") from exc


def _row(cik: int, values: tuple[Any, ...]) -> FilingRow:
    accession, form, filed, reported, document = values
    try:
        filing_date = date.fromisoformat(str(filed))
        report_date = date.fromisoformat(str(reported)) if reported else None
    except ValueError as exc:
        raise MalformedData(f"filing {accession} has a bad date: {exc}") from exc
    accession, document = str(accession), str(document or "")
    index_url = filing_index_url(cik, accession)
    return FilingRow(
        cik=cik,
        accession=accession,
        form=str(form),
        filing_date=filing_date,
        report_date=report_date,
        primary_document=document,
        url=filing_document_url(cik, accession, document) if document else index_url,
        index_url=index_url,
    )
