from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from memos.models import Company, FactRecord, SourceDocument
from memos.services.access import can_start_runs, visible_runs

HEADLINE_METRICS = ("revenue", "net_income", "operating_cash_flow")


@dataclass(frozen=True)
class CompanyRow:
    company: Company
    fiscal_year: int | None
    metrics: dict[str, FactRecord]
    fact_count: int


def _company_rows() -> list[CompanyRow]:
    rows = []
    for company in Company.objects.order_by("ticker"):
        annual = FactRecord.objects.filter(company=company, fiscal_period="FY", metric__in=HEADLINE_METRICS)
        latest = annual.filter(metric="revenue").order_by("-period_end").first()
        year = latest.fiscal_year if latest else None
        metrics = {fact.metric: fact for fact in annual.filter(fiscal_year=year)} if year else {}
        rows.append(CompanyRow(company, year, metrics, company.facts.count()))
    return rows


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "memos/landing.html")
    context = {
        "companies": _company_rows(),
        "document_count": SourceDocument.objects.count(),
        "runs": visible_runs(request.user).select_related("brief__company")[:10],
        "can_start_runs": can_start_runs(request.user),
    }
    return render(request, "memos/home.html", context)
