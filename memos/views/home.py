"""The home page: the fact store company by company, what the desk holds for each, and the latest runs.

A constant number of queries whatever the number of companies and runs
(tests/memos/pages/test_query_counts.py). The fact store's panel is the same for every reader and changes only
with the fact store or the snapshot's files: it is drawn once per version of both and kept in the shared cache
(memos.cache), so a page usually reads one version row for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db.models import OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from memos.cache import cache_key, cached
from memos.models import ArtefactVersion, Company, FactRecord, SourceDocument
from memos.pipeline.fact_store import fact_store_version
from memos.services.access import can_start_runs, visible_runs, visible_versions
from memos.services.holdings import Holdings, files_fingerprint, holdings

HEADLINE_METRICS = ("revenue", "net_income", "operating_cash_flow")


@dataclass(frozen=True)
class CompanyRow:
    company: Company
    fiscal_year: int | None
    metrics: dict[str, FactRecord]
    holdings: Holdings


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


def _fact_store_html(snapshot: Path) -> str:
    context = {"companies": company_rows(snapshot), "document_count": SourceDocument.objects.count()}
    return render_to_string("memos/fragments/fact_store.html", context)


def fact_store_html() -> SafeString:
    snapshot = Path(settings.SNAPSHOT_DIR)
    key = cache_key("home-fact-store", fact_store_version(), files_fingerprint(snapshot))
    # Drawn by our own autoescaping template, from rows only: nothing a reader sent reaches it.
    return mark_safe(cached(key, lambda: _fact_store_html(snapshot), type_=str))  # noqa: S308


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "memos/landing.html")
    published = ArtefactVersion.Status.PUBLISHED
    context = {
        "fact_store": fact_store_html(),
        "runs": visible_runs(request.user).select_related("brief__company")[:10],
        # What the desk published, newest first: the executives' reading list (they see nothing else).
        "published": visible_versions(request.user)
        .filter(status=published)
        .select_related("brief__company")
        .order_by("-published_at")[:10],
        "can_start_runs": can_start_runs(request.user),
        "refreshes": refresh_rows() if settings.DATA_MODE == "live" else None,
        "refresh_hours": settings.DATA_REFRESH_HOURS,
    }
    return render(request, "memos/home.html", context)


def refresh_rows() -> list[Company]:
    """Live mode: each watched company (a brief is about it) with its last SEC refresh and what failed, in
    one query (memos.services.fact_refresh refreshes them daily)."""
    watched = Company.objects.filter(briefs__isnull=False).values("pk").distinct()
    return list(
        Company.objects.filter(pk__in=watched)
        .only("ticker", "name", "facts_refreshed_at", "refresh_failed_at", "refresh_error")
        .order_by("ticker")
    )
