"""The fact store's page: company by company, what the desk holds for each, with filters ("has statements",
"has prices", "has documents", combinable in the query string) and one count per kind at the top.

The page is the same for every reader and changes only with the fact store or the snapshot's files: each
filter's page is drawn once per version of both and kept in the shared cache (memos.cache), so a visit
usually reads one version row for it, whatever the number of companies (tests/memos/pages/test_query_counts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from memos.cache import cache_key, cached
from memos.models import Company, FactRecord, SourceDocument
from memos.pipeline.fact_store import fact_store_version
from memos.services.holdings import Holdings, files_fingerprint, holdings

HEADLINE_METRICS = ("revenue", "net_income", "operating_cash_flow")


@dataclass(frozen=True)
class CompanyRow:
    company: Company
    fiscal_year: int | None
    metrics: dict[str, FactRecord]
    holdings: Holdings


def has_statements(held: Holdings) -> bool:
    """Figures from its filings (companyfacts or inline XBRL), annual or not."""
    return held.statement_facts > 0


def has_prices(held: Holdings) -> bool:
    """A daily price file the desk reads: the snapshot's, or the stocknet universe's the screen charts."""
    return held.prices is not None


def has_documents(held: Holdings) -> bool:
    """Anything to read about it: news, prediction markets, filing text, or a bundled filing."""
    return bool(held.news or held.markets or held.filing_documents or held.filings)


@dataclass(frozen=True)
class Kind:
    param: str  # the query-string name of its filter
    label: str  # the filter's name
    counted: str  # its count's words ("7 with statements")
    test: Callable[[Holdings], bool]


KINDS = (
    Kind("statements", "has statements", "with statements", has_statements),
    Kind("prices", "has prices", "with prices", has_prices),
    Kind("documents", "has documents", "with documents", has_documents),
)


def _headline_facts(years: dict[int, int]) -> dict[int, dict[str, FactRecord]]:
    """The headline figures of each company's given fiscal year, in one query."""
    of_year = Q(pk__in=[])
    for company_id, year in years.items():
        of_year |= Q(company_id=company_id, fiscal_year=year)
    facts = FactRecord.objects.filter(of_year, fiscal_period="FY", metric__in=HEADLINE_METRICS).order_by(
        "company_id", "metric", "period_end"
    )
    found: dict[int, dict[str, FactRecord]] = {}
    for fact in facts:  # ordered: a later period of the same metric and year wins
        found.setdefault(fact.company_id, {})[fact.metric] = fact
    return found


def company_rows(snapshot: Path) -> list[CompanyRow]:
    # The headline year is the fiscal year of the company's latest annual revenue.
    latest_revenue = (
        FactRecord.objects.filter(company=OuterRef("pk"), fiscal_period="FY", metric="revenue")
        .order_by("-period_end")
        .values("fiscal_year")[:1]
    )
    companies = list(Company.objects.annotate(headline_year=Subquery(latest_revenue)).order_by("ticker"))
    headline = _headline_facts({c.pk: c.headline_year for c in companies if c.headline_year is not None})
    held = holdings(companies=companies, snapshot=snapshot)
    return [CompanyRow(c, c.headline_year, headline.get(c.pk, {}), held[c.ticker]) for c in companies]


def chosen_kinds(request: HttpRequest) -> tuple[str, ...]:
    """The filters the query string asks for, in ``KINDS`` order (so one page has one cache key)."""
    return tuple(kind.param for kind in KINDS if request.GET.get(kind.param) in {"1", "on", "yes"})


def _fact_store_html(snapshot: Path, chosen: tuple[str, ...]) -> str:
    rows = company_rows(snapshot)
    wanted = [kind for kind in KINDS if kind.param in chosen]
    shown = [row for row in rows if all(kind.test(row.holdings) for kind in wanted)]
    context = {
        "companies": shown,
        "total": len(rows),
        "counts": [(kind, sum(kind.test(row.holdings) for row in rows)) for kind in KINDS],
        "chosen": chosen,
        "filtered": bool(wanted),
        "chosen_labels": " and ".join(kind.label for kind in wanted),
        "document_count": SourceDocument.objects.count(),
    }
    return render_to_string("memos/facts_store.html", context)


def fact_store_html(chosen: tuple[str, ...] = ()) -> SafeString:
    snapshot = Path(settings.SNAPSHOT_DIR)
    key = cache_key("fact-store-page", fact_store_version(), files_fingerprint(snapshot), *chosen)
    # Drawn by our own autoescaping template, from rows only: the filters reach it as names from ``KINDS``.
    return mark_safe(cached(key, lambda: _fact_store_html(snapshot, chosen), type_=str))  # noqa: S308


@require_safe
@login_required
def facts_page(request: HttpRequest) -> HttpResponse:
    chosen = chosen_kinds(request)
    return render(request, "memos/facts.html", {"fact_store": fact_store_html(chosen), "kinds": KINDS})
