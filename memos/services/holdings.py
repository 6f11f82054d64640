"""What the desk holds for each company, read from what is there now: the fact store's rows and the
snapshot's files.

Rows (filed statements, quant figures, news) are counted in two queries for all companies together; a page may
keep the result under ``fact_store_version``. The files (daily price ranges, bundled filings) change only when
the snapshot folder does: they are read once per ``files_fingerprint`` (names, sizes and modification times)
and kept in the shared cache, so a file added to the snapshot shows on the next page load, and one web process
reads it for all of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from django.db.models import Count, Max, Min, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, JSONArray

from agents.data.errors import DataError
from memos.cache import cache_key, cached
from memos.models import Company, FactRecord, SourceDocument

STATEMENT_SOURCES = (FactRecord.Source.COMPANYFACTS, FactRecord.Source.INLINE_XBRL)
# The bundled daily prices, searched in the order the screen searches them (memos.pipeline.screen.universe's
# ``prices``: the snapshot's price files, then the stocknet universe's), so a company whose prices the screen
# charts is never said to have no price history.
PRICE_FOLDERS = (("prices", "daily"), ("stocknet", "price"))
FILINGS_FOLDER = ("edgar", "filings")
# Bundled primary documents are named ``{ticker}-{form}-{filed date}.html.gz`` (memos.services.snapshot reads
# the same files); the R pages beside them are excerpts of one of these.
FILING_NAME = re.compile(r"^(?P<ticker>[a-z.]+)-(?P<form>10-[kq])-(?P<filed>\d{4}-\d{2}-\d{2})\.html\.gz$")


@dataclass(frozen=True)
class PriceRange:
    first: date
    last: date
    sessions: int
    file: str


@dataclass(frozen=True)
class Filing:
    form: str
    filed: date


@dataclass(frozen=True)
class SnapshotFiles:
    """Per ticker: the daily price file's range, the bundled filings, and price files that do not read."""

    prices: dict[str, PriceRange] = field(default_factory=dict)
    filings: dict[str, tuple[Filing, ...]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Holdings:
    ticker: str
    facts: int = 0
    statement_facts: int = 0  # figures from filings (companyfacts or inline XBRL), annual or not
    statements_to: date | None = None  # the end of the latest period they cover
    first_year: int | None = None  # of the filed annual statements
    last_year: int | None = None
    years: int = 0
    quant_as_of: date | None = None  # the session the quant figures were computed at
    news: int = 0
    markets: int = 0  # prediction markets that name the company (the news specialist reads them as sentiment)
    filing_documents: int = 0  # filing text stored as source documents
    prices: PriceRange | None = None
    price_problem: str = ""
    filings: tuple[Filing, ...] = ()


def holdings(*, companies: Sequence[Company], snapshot: Path) -> dict[str, Holdings]:
    """Each company's holdings by ticker: two queries and the (cached) snapshot files."""
    files = snapshot_files(snapshot)
    documents = _document_counts(companies)
    facts = _fact_summaries(companies)
    found = {}
    for company in companies:
        news, markets, filing_documents = documents.get(company.pk, (0, 0, 0))
        found[company.ticker] = Holdings(
            ticker=company.ticker,
            **facts.get(company.pk, {}),
            news=news,
            markets=markets,
            filing_documents=filing_documents,
            prices=files.prices.get(company.ticker),
            price_problem=files.unreadable.get(company.ticker, ""),
            filings=files.filings.get(company.ticker, ()),
        )
    return found


def _fact_summaries(companies: Sequence[Company]) -> dict[int, dict[str, Any]]:
    """Per company id, the ``Holdings`` fields read from its facts, in one query."""
    filed = Q(source__in=STATEMENT_SOURCES)
    annual = filed & Q(fiscal_period="FY")
    rows = (
        FactRecord.objects.filter(company__in=[c.pk for c in companies])
        .order_by()
        .values("company_id")
        .annotate(
            facts=Count("pk"),
            statement_facts=Count("pk", filter=filed),
            statements_to=Max("period_end", filter=filed),
            first_year=Min("fiscal_year", filter=annual),
            last_year=Max("fiscal_year", filter=annual),
            years=Count("fiscal_year", filter=annual, distinct=True),
            quant_as_of=Max("period_end", filter=Q(fiscal_period="DAY")),
        )
    )
    return {row["company_id"]: {k: v for k, v in row.items() if k != "company_id"} for row in rows}


def _document_counts(companies: Sequence[Company]) -> dict[int, tuple[int, int, int]]:
    """News, prediction markets and filing documents linked to each company (by ticker), in one query."""

    def linked(kind: str) -> Coalesce:
        about = (
            SourceDocument.objects.filter(kind=kind, tickers__contains=JSONArray(OuterRef("ticker")))
            .order_by()
            .values("kind")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(about), 0)

    rows = (
        Company.objects.filter(pk__in=[c.pk for c in companies])
        .annotate(
            news=linked(SourceDocument.Kind.NEWS),
            markets=linked(SourceDocument.Kind.PREDICTION_MARKET),
            filings=linked(SourceDocument.Kind.FILING),
        )
        .values_list("pk", "news", "markets", "filings")
    )
    return {pk: (news, markets, filings) for pk, news, markets, filings in rows}


def files_fingerprint(root: Path) -> str:
    """Changes whenever a file ``snapshot_files`` reads is added, removed or rewritten."""
    return _fingerprint(root, _files(root))


def snapshot_files(root: Path) -> SnapshotFiles:
    """The price ranges and filings of the snapshot at ``root``, read once per version of its files."""
    paths = _files(root)
    key = cache_key("snapshot-files", _fingerprint(root, paths))
    return cached(key, lambda: _read_files(root, paths), type_=SnapshotFiles)


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for parts in (*PRICE_FOLDERS, FILINGS_FOLDER):
        folder = root.joinpath(*parts)
        if folder.is_dir():
            found.extend(sorted(p for p in folder.iterdir() if p.is_file()))
    return found


def _fingerprint(root: Path, paths: Iterable[Path]) -> str:
    digest = hashlib.sha256(str(root.resolve()).encode())
    for path in paths:
        stat = path.stat()
        digest.update(f"\0{path.relative_to(root).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


def _read_files(root: Path, paths: Iterable[Path]) -> SnapshotFiles:
    # pandas only on a miss: a web process that never reads a price file never imports it.
    from agents.data.prices import PriceFolders, load_price_csv, ticker_from_path

    files = SnapshotFiles()
    prices = PriceFolders([root.joinpath(*parts) for parts in PRICE_FOLDERS])
    filings: dict[str, list[Filing]] = {}
    for path in paths:
        if path.parent in prices.folders and path.suffix == ".csv":
            ticker = ticker_from_path(path)
            if ticker in files.prices or ticker in files.unreadable or prices.path_for(ticker) != path:
                continue  # the file the desk reads for the ticker (the largest) is the one described
            try:
                series = load_price_csv(path, ticker=ticker)
            except DataError as exc:
                files.unreadable[ticker] = str(exc)
                continue
            files.prices[ticker] = PriceRange(
                series.first_date, series.last_date, len(series.bars), path.name
            )
        elif match := FILING_NAME.match(path.name):
            filing = Filing(match["form"].upper(), date.fromisoformat(match["filed"]))
            filings.setdefault(match["ticker"].upper(), []).append(filing)
    files.filings.update(
        {ticker: tuple(sorted(found, key=lambda f: f.filed)) for ticker, found in filings.items()}
    )
    return files
