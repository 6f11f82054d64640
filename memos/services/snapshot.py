"""Loading the bundled real-data snapshot into the fact store.

What is loaded, all read through the same adapters the live mode uses:
- SEC companyfacts for every company that has a file (AAPL, GOOG, META, NVDA, TSLA, TSM): annual, quarterly,
  derived;
- inline XBRL filings (10-K/10-Q primary documents) for figures companyfacts does not hold (KO, the
  quarters after TSLA's stale companyfacts); a fact id already taken by companyfacts is never overwritten,
  so the citation stays the filing that first reported the figure;
- from the same documents, revenue by product line and business segment for each filing's own period
  (``agents.data.edgar.segments``: ``AAPL:revenue_product_iphone:FY2024``), counted apart as "segments";
- the quant profile of every stock with a bundled price file, against SPY, as of its last session;
- news articles and prediction markets as untrusted source documents, each linked to the demo companies
  it names (``agents.data.companies``): Tiingo lists its tickers, a NewsAPI headline or a market question
  is linked only where it names the company ("NVIDIA largest company in July?" is NVDA's).

Nothing is filled in where the snapshot has no licensed file: a company without one gets no facts of that
kind, and the report says so (``LoadReport.gaps``), so a specialist with nothing to read is not asked.

The snapshot's content hash, with ``LOADER_VERSION``, is its ``data_version``: loading an unchanged snapshot
again with the same loader does nothing.
"""

from __future__ import annotations

import csv
import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from agents.data.companies import COMPANY_NAMES
from agents.data.documents import tickers_mentioned
from agents.data.edgar import (
    FilingRow,
    SnapshotEdgarSource,
    facts_from_companyfacts,
    facts_from_filing,
    filings_from_submissions,
    read_filing,
    segment_facts,
)
from agents.data.edgar.sources import DocumentUnavailable
from agents.data.errors import DataError
from agents.data.markets import SnapshotMarketSource, market_document
from agents.data.news import SnapshotNewsSource
from agents.data.prices import SnapshotPriceSource
from agents.data.types import Citation, Fact, SourceDocument
from agents.quant import compute_profile, quant_facts
from memos.models import Company, DataLoad, FactRecord
from memos.models import SourceDocument as SourceDocumentRow
from memos.pipeline.fact_store import fact_rows, save_documents, save_facts
from memos.services.surfaces import new_facts

BENCHMARK = "SPY"
# Part of the data version: bump it when the loader reads the same files into different rows (version 2
# links news and markets to the companies they name; version 3 adds the filings' revenue by segment), so a
# desk loaded by the older loader loads again.
LOADER_VERSION = 3
# Bundled inline XBRL documents are named ``{ticker}-{form}-{filed date}.html.gz``.
FILING_NAME = re.compile(r"^(?P<ticker>[a-z]+)-(?P<form>10-[kq])-(?P<filed>\d{4}-\d{2}-\d{2})\.html\.gz$")
COMPANYFACTS_NAME = re.compile(r"^CIK\d{10}_(?P<ticker>[A-Z.]+)\.json(\.gz)?$")
STOCK_PRICE_NAME = re.compile(r"^(?P<ticker>[A-Z.]+)_\d{4}-\d{4}_stocknet\.csv$")


@dataclass
class LoadReport:
    data_version: str
    skipped: bool = False
    companies: int = 0
    facts: dict[str, int] = field(default_factory=dict)
    documents: int = 0
    problems: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.skipped:
            return f"snapshot {self.data_version[:12]} already loaded; nothing to do"
        facts = ", ".join(f"{count} {kind}" for kind, count in self.facts.items())
        lines = [
            f"loaded snapshot {self.data_version[:12]}: {self.companies} companies, facts ({facts}), "
            f"{self.documents} source documents"
        ]
        lines.extend(f"  skipped: {problem}" for problem in self.problems)
        lines.extend(f"  {gap}" for gap in self.gaps)
        return "\n".join(lines)


def snapshot_version(root: Path) -> str:
    """A hash of the loader version and every file's relative path and bytes: changes exactly when the
    snapshot's content, or the way it is loaded, does."""
    digest = hashlib.sha256(f"loader {LOADER_VERSION}\0".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def load_snapshot(*, root: Path, force: bool = False) -> LoadReport:
    """Load ``root`` (the layout of ``data/snapshot``) into the database, once per content version."""
    version = snapshot_version(root)
    if not force and DataLoad.objects.filter(data_version=version).exists():
        return LoadReport(data_version=version, skipped=True)
    report = LoadReport(data_version=version)
    edgar = SnapshotEdgarSource(root)
    sectors = _sectors(root / "reference" / "sp500_constituents.csv")
    with transaction.atomic():
        companies = _CompanyBook(edgar, sectors, report)
        _load_companyfacts(root, edgar, companies, report)
        _load_inline_filings(root, edgar, companies, report)
        _load_quant(root, companies, report)
        _load_documents(root, report)
        report.companies = len(companies.seen)
        report.gaps = _gaps(companies.seen)
        DataLoad.objects.update_or_create(
            data_version=version,
            defaults={
                "source": str(root),
                "counts": {"companies": report.companies, **report.facts, "documents": report.documents},
            },
        )
        # Newer figures may meet a frozen memo's falsifier: each workflow reacts once this load commits.
        new_facts(company.pk for company in companies.seen.values())
    return report


class _CompanyBook:
    """Company rows by ticker, created from SEC's company list with their S&P 500 sector."""

    def __init__(self, edgar: SnapshotEdgarSource, sectors: dict[str, str], report: LoadReport) -> None:
        self._edgar = edgar
        self._sectors = sectors
        self._report = report
        self.seen: dict[str, Company] = {}

    def get(self, ticker: str, *, name: str = "", cik: int | None = None, taxonomy: str = "") -> Company:
        symbol = ticker.upper()
        if symbol in self.seen and not taxonomy:
            return self.seen[symbol]
        listed = self._edgar.company_tickers().get(symbol)
        defaults: dict[str, object] = {
            "name": name or (listed[1] if listed else symbol),
            "cik": cik if cik is not None else (listed[0] if listed else None),
            "sector": self._sectors.get(symbol, ""),
        }
        if taxonomy:
            defaults["taxonomy"] = taxonomy
        company, _ = Company.objects.update_or_create(ticker=symbol, defaults=defaults)
        self.seen[symbol] = company
        return company


def _count(report: LoadReport, kind: str, saved: int) -> None:
    report.facts[kind] = report.facts.get(kind, 0) + saved


def _load_companyfacts(
    root: Path, edgar: SnapshotEdgarSource, companies: _CompanyBook, report: LoadReport
) -> None:
    for path in sorted((root / "edgar" / "companyfacts").glob("CIK*.json*")):
        match = COMPANYFACTS_NAME.match(path.name)
        if match is None:
            continue
        ticker = match["ticker"]
        try:
            listed = edgar.company_tickers().get(ticker)
            if listed is None:
                raise DataError(f"{ticker} is not in SEC's company list")
            fact_set = facts_from_companyfacts(edgar.companyfacts(listed[0]), ticker=ticker)
        except DataError as exc:
            report.problems.append(f"{path.name}: {exc}")
            continue
        company = companies.get(ticker, name=fact_set.entity, cik=fact_set.cik, taxonomy=fact_set.taxonomy)
        _count(
            report,
            "companyfacts",
            save_facts(company=company, facts=fact_set.facts, data_version=report.data_version),
        )


def _load_inline_filings(
    root: Path, edgar: SnapshotEdgarSource, companies: _CompanyBook, report: LoadReport
) -> None:
    filings: dict[int, list[FilingRow]] = {}
    for path in sorted((root / "edgar" / "filings").glob("*.html.gz")):
        match = FILING_NAME.match(path.name)
        if match is None:
            continue
        ticker, form, filed = match["ticker"].upper(), match["form"].upper(), match["filed"]
        listed = edgar.company_tickers().get(ticker)
        cik = listed[0] if listed else None
        accession = _accession(filings, edgar, cik, form=form, filed=filed)
        try:
            filing = read_filing(
                path.read_bytes(), ticker=ticker, accession=accession, filed=_date(filed), cik=cik
            )
            fact_set, segments = facts_from_filing(filing), segment_facts(filing)
        except DataError as exc:
            report.problems.append(f"{path.name}: {exc}")
            continue
        company = companies.get(ticker, name=fact_set.entity, cik=fact_set.cik)
        _count(report, "inline-xbrl", _save_new(company, fact_set.facts, report.data_version))
        _count(report, "segments", _save_new(company, segments, report.data_version))


def _save_new(company: Company, facts: tuple[Fact, ...], data_version: str) -> int:
    """Save the facts whose ids the store does not hold yet: a figure companyfacts (or an earlier filing)
    already holds keeps its first-reported citation."""
    ids = [fact.fact_id for fact in facts]
    held = set(FactRecord.objects.filter(fact_id__in=ids).values_list("fact_id", flat=True))
    rows = fact_rows(
        company=company, facts=[fact for fact in facts if fact.fact_id not in held], data_version=data_version
    )
    FactRecord.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def _accession(
    filings: dict[int, list[FilingRow]], edgar: SnapshotEdgarSource, cik: int | None, *, form: str, filed: str
) -> str | None:
    """The filing's accession number from the company's submissions list (read once per company into
    ``filings``), when the snapshot has one."""
    if cik is None:
        return None
    if cik not in filings:
        try:
            filings[cik] = filings_from_submissions(edgar.submissions(cik), cik=cik)
        except DocumentUnavailable:
            filings[cik] = []
    for row in filings[cik]:
        if row.form == form and row.filing_date.isoformat() == filed:
            return row.accession
    return None


def _load_quant(root: Path, companies: _CompanyBook, report: LoadReport) -> None:
    prices = SnapshotPriceSource(root)
    try:
        benchmark = prices.series(BENCHMARK)
    except DataError as exc:
        report.problems.append(f"benchmark {BENCHMARK}: {exc}")
        return
    for path in sorted((root / "prices" / "daily").glob("*.csv")):
        match = STOCK_PRICE_NAME.match(path.name)
        if match is None:
            continue
        ticker = match["ticker"]
        try:
            series = prices.series(ticker)
            profile = compute_profile(series, benchmark=benchmark)
        except DataError as exc:
            report.problems.append(f"{path.name}: {exc}")
            continue
        facts = quant_facts(profile, ticker=ticker, citation=_price_citation(path))
        company = companies.get(ticker)
        _count(report, "quant", save_facts(company=company, facts=facts, data_version=report.data_version))


def _price_citation(path: Path) -> Citation:
    # The primary source of these bars is Yahoo Finance; the label names the exact bundled file.
    ticker = path.name.split("_", 1)[0]
    return Citation(
        source="prices",
        url=f"https://finance.yahoo.com/quote/{ticker}/history",
        label=f"daily bars, {path.name}",  # the file under data/snapshot/prices/daily/
    )


def _load_documents(root: Path, report: LoadReport) -> None:
    documents: list[SourceDocument] = []
    try:
        documents.extend(SnapshotNewsSource(root, aliases=COMPANY_NAMES).all_documents())
    except DataError as exc:
        report.problems.append(f"news: {exc}")
    try:
        documents.extend(
            market_document(market, tickers=tickers_mentioned(market.question, COMPANY_NAMES))
            for market in SnapshotMarketSource(root).markets()
        )
    except DataError as exc:
        report.problems.append(f"prediction markets: {exc}")
    report.documents = save_documents(documents)


STATEMENT_SOURCES = ("sec-companyfacts", "sec-inline-xbrl")


def _gaps(companies: dict[str, Company]) -> list[str]:
    """Which companies the snapshot has no file of a kind for, and the session the quant figures stand at."""
    tickers = sorted(companies)
    facts = FactRecord.objects.filter(company__in=companies.values())
    with_statements = set(
        facts.filter(source__in=STATEMENT_SOURCES).values_list("company__ticker", flat=True)
    )
    last_session = dict(
        facts.filter(fiscal_period="DAY")
        .values("company__ticker")
        .annotate(day=Max("period_end"))
        .values_list("company__ticker", "day")
    )
    news = SourceDocumentRow.objects.filter(kind="news")
    with_news = {ticker for ticker in tickers if news.filter(tickers__contains=[ticker]).exists()}
    gaps = []
    for what, held in (
        ("financial statements", with_statements),
        ("daily prices", set(last_session)),
        ("news articles", with_news),
    ):
        if missing := [ticker for ticker in tickers if ticker not in held]:
            gaps.append(f"no {what} in the snapshot for {', '.join(missing)}")
    for day in sorted(set(last_session.values())):
        priced = ", ".join(ticker for ticker in tickers if last_session.get(ticker) == day)
        gaps.append(f"quant figures stand at {day}, the last session of the price files, for {priced}")
    return gaps


def _sectors(path: Path) -> dict[str, str]:
    """Ticker → GICS sector from the bundled S&P 500 list (empty when the file is absent)."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["Symbol"].strip().upper(): row["GICS Sector"].strip() for row in csv.DictReader(handle)}


def _date(text: str) -> date:
    return date.fromisoformat(text)
