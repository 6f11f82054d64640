"""Stage 2, data (seed 001 A3, tools T1-T4): code picks the figures the deck may show from the fact store and
freezes them in the run, each as the ``Figure`` both renderers print and the fact-check traces.

The fact store already holds the filed figures, the quant figures and the figures code derived from them
(growth, margins, free cash flow: agents.data.edgar.derived, each recorded with its derivation and inputs).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Max, Q

from agents.data.edgar.derived import BRIDGE_STEPS, EARNINGS_STEPS, TTM_SUFFIX
from agents.data.edgar.segments import METRIC_PREFIXES, complete_breakdown, is_segment
from agents.data.industries import peers
from agents.deck.outputs import DeckEvidence
from agents.deck.spec import Figure, display
from agents.deck.watch_slide import MemoCatalyst
from agents.text.figures import REF
from memos.models import ArtefactVersion, Company, FactRecord
from memos.pipeline.company_facts import ensure_company_facts
from memos.pipeline.context import StageContext
from memos.pipeline.data_sources import constituents_file
from memos.pipeline.deck.plan import FIGURES
from memos.pipeline.errors import StageFailed
from memos.pipeline.evidence import FUNDAMENTAL_METRICS, QUANT_MACRO_METRICS, fact_period

MEMO_KIND = "memo"
PEER_LIMIT = 20  # competitors looked up; only those the fact store holds are shown
PEER_METRICS = ("revenue_growth_yoy", "operating_margin")
DECK_METRICS = (
    *FUNDAMENTAL_METRICS,
    "revenue_growth_yoy",
    "gross_margin",
    "operating_margin",
    "net_margin",
    "fcf",
)
YEARS = 3
QUARTERS = 5  # the latest five quarters: the last one beside the same quarter a year before
QUARTER_METRICS = ("revenue", "net_income", "gross_margin", "operating_margin")
TTM_METRICS = tuple(
    f"{metric}{TTM_SUFFIX}"
    for metric in ("revenue", "net_income", "gross_margin", "operating_margin", "net_margin")
)
LABELS = {
    "revenue": "Revenue",
    "gross_profit": "Gross profit",
    "operating_income": "Operating income",
    "net_income": "Net income",
    "rnd_expense": "R&D expense",
    "operating_cash_flow": "Operating cash flow",
    "capex": "Capital expenditure",
    "cash": "Cash",
    "revenue_growth_yoy": "Revenue growth",
    "gross_margin": "Gross margin",
    "operating_margin": "Operating margin",
    "net_margin": "Net margin",
    "fcf": "Free cash flow",
    "eps_diluted": "Diluted EPS",
    "beta": "Beta",
    "volatility_annualised": "Volatility (annualised)",
    "return_ytd": "Return year to date",
    "beta_sector": "Beta against the sector",
    "alpha_1w": "Alpha over the last week",
    "cost_of_revenue": "Cost of revenue",
    "operating_expenses": "Operating expenses",
    "below_operating": "Tax, interest and other",
    # Each line's effect on net income between two fiscal years (agents.data.edgar.derived.EARNINGS_STEPS).
    "ni_step_revenue": "Revenue",
    "ni_step_cost_of_revenue": "Cost of revenue",
    "ni_step_operating_expenses": "Operating expenses",
    "ni_step_below_operating": "Tax, interest and other",
    "revenue_ttm": "Revenue, twelve months to",
    "net_income_ttm": "Net income, twelve months to",
    "gross_margin_ttm": "Gross margin, twelve months to",
    "operating_margin_ttm": "Operating margin, twelve months to",
    "net_margin_ttm": "Net margin, twelve months to",
}


def run_data(ctx: StageContext) -> None:
    company = ctx.company
    step = ctx.step(FIGURES)
    ctx.start(step)
    ensure_company_facts(ctx, step, company)
    chosen = deck_facts(company)
    if not chosen:
        ctx.fail_step(step, f"the fact store holds no annual figures for {company.ticker}")
        raise StageFailed(f"no annual figures for {company.ticker}: a deck needs filed figures to show")
    memo = latest_memo(ctx)
    chosen += _memo_cited(memo, {fact.fact_id for fact in chosen})
    figures = [figure_of(fact, own=company.ticker) for fact in chosen]
    version = data_version(figures)
    ctx.set_run(data_version=version)
    as_of = max((fact.filed or fact.period_end for fact in chosen), default=None)
    ctx.finish(step, DeckEvidence(data_version=version, as_of=as_of, figures=figures, **memo))


def latest_memo(ctx: StageContext) -> dict[str, Any]:
    """The brief's latest memo version as the deck quotes it: read from its frozen JSON by these few keys
    (a workflow's package does not import another's models), nothing when the brief has none or the keys
    are not there."""
    version = (
        ArtefactVersion.objects.filter(brief_id=ctx.run.brief_id, kind=MEMO_KIND).order_by("-number").first()
    )
    content = version.content if version is not None and isinstance(version.content, dict) else {}
    memo, firewall = content.get("memo"), content.get("firewall")
    if version is None or not isinstance(memo, dict) or not isinstance(firewall, dict):
        return {}
    falsifiers = memo.get("falsifiers")
    thesis = memo.get("headline_thesis")
    # The catalysts the memo's code kept (dated after its data, within its horizon), else all it wrote.
    catalysts = content.get("catalysts")
    catalysts = catalysts if isinstance(catalysts, list) else memo.get("catalysts")
    return {
        "memo_version": f"memo v{version.number}",
        "memo_recommendation": f"{firewall.get('final', '')}, sizing {memo.get('sizing', '')}",
        "memo_falsifiers": [str(line) for line in falsifiers if isinstance(line, str)]
        if isinstance(falsifiers, list)
        else [],
        "memo_thesis": thesis if isinstance(thesis, str) else "",
        "memo_catalysts": [
            MemoCatalyst(date=str(c["date"]), sign=str(c["expected_sign"]), event=str(c["event"]))
            for c in catalysts
            if isinstance(c, dict) and {"date", "expected_sign", "event"} <= c.keys()
        ]
        if isinstance(catalysts, list)
        else [],
    }


def _memo_cited(memo: dict[str, Any], chosen: set[str]) -> list[FactRecord]:
    """The facts the memo's quoted lines cite that the deck did not choose already: a citation on the "what
    to watch" slide is printed as its figure, so the deck carries it like any other."""
    lines = [memo.get("memo_thesis", ""), *memo.get("memo_falsifiers", [])]
    lines += [catalyst.event for catalyst in memo.get("memo_catalysts", [])]
    cited = {match for line in lines for match in REF.findall(line)} - chosen
    return list(FactRecord.objects.filter(fact_id__in=cited).order_by("fact_id"))


def deck_facts(company: Company) -> list[FactRecord]:
    """The last three fiscal years of the fundamentals and what code derived from them (the latest year's
    bridge from revenue to net income too), the latest five quarters and the trailing twelve months, then
    the latest price-based figures: in one fixed order, so the same data gives the same prompts."""
    annual = FactRecord.objects.filter(company=company, fiscal_period="FY", metric__in=DECK_METRICS)
    latest = annual.aggregate(latest=Max("fiscal_year"))["latest"]
    chosen = (
        list(annual.filter(fiscal_year__gt=latest - YEARS).order_by("metric", "fiscal_year"))
        if latest is not None
        else []
    )
    if latest is not None:
        steps = FactRecord.objects.filter(
            company=company,
            fiscal_period="FY",
            fiscal_year=latest,
            metric__in=(*BRIDGE_STEPS, *EARNINGS_STEPS),
        )
        chosen += list(steps.order_by("metric"))
    chosen += _quarters(company)
    chosen += _segments(company)
    chosen += _peers(company)
    daily = FactRecord.objects.filter(company=company, fiscal_period="DAY", metric__in=QUANT_MACRO_METRICS)
    last = daily.order_by("-period_end").values_list("period_end", flat=True).first()
    if last is not None:
        chosen += list(daily.filter(period_end=last).order_by("metric"))
    return chosen


def _quarters(company: Company) -> list[FactRecord]:
    """The latest quarters' figures, oldest first, and the trailing twelve months to the latest quarter."""
    quarterly = FactRecord.objects.filter(
        company=company, fiscal_period__in=("Q1", "Q2", "Q3", "Q4"), metric__in=QUARTER_METRICS
    )
    periods = sorted(
        set(quarterly.values_list("fiscal_year", "fiscal_period")), key=lambda p: (p[0] or 0, p[1])
    )[-QUARTERS:]
    chosen = sorted(
        (fact for fact in quarterly if (fact.fiscal_year, fact.fiscal_period) in periods),
        key=lambda fact: (fact.metric, fact.fiscal_year or 0, fact.fiscal_period),
    )
    trailing = FactRecord.objects.filter(company=company, metric__in=TTM_METRICS)
    last = trailing.order_by("-period_end").values_list("period_end", flat=True).first()
    if last is not None:
        chosen += list(trailing.filter(period_end=last).order_by("metric"))
    return chosen


def _segments(company: Company) -> list[FactRecord]:
    """The latest period's revenue by product line (else by business segment) that the filings break down
    completely: the lines whose sum is that period's filed revenue (agents.data.edgar.segments), largest
    first. None when no inline filing gave lines, or none add up to the total."""
    lines = FactRecord.objects.filter(company=company).filter(
        reduce(or_, (Q(metric__startswith=prefix) for prefix in METRIC_PREFIXES.values()))
    )
    by_period: dict[tuple[int | None, str], list[FactRecord]] = {}
    for fact in lines.order_by("-period_end", "fact_id"):
        by_period.setdefault((fact.fiscal_year, fact.fiscal_period), []).append(fact)
    for (year, period), held in by_period.items():  # the latest period first
        total = FactRecord.objects.filter(
            company=company, metric="revenue", fiscal_year=year, fiscal_period=period
        ).first()
        if total is None:
            continue
        for prefix in METRIC_PREFIXES.values():  # product lines first, then business segments
            axis = {fact.fact_id: fact for fact in held if fact.metric.startswith(prefix)}
            chosen = complete_breakdown({i: fact.value for i, fact in axis.items()}, total.value)
            if chosen:
                return sorted((axis[i] for i in chosen), key=lambda fact: -fact.value)
    return []


def _peers(company: Company) -> list[FactRecord]:
    """The latest fiscal year's growth and operating margin of each competitor the fact store holds (the
    S&P 500 constituents in the company's GICS sub-industry: agents.data.industries), by ticker."""
    _, tickers = peers(constituents_file(), company.ticker, limit=PEER_LIMIT)
    chosen: list[FactRecord] = []
    for ticker in tickers:
        annual = FactRecord.objects.filter(
            company__ticker=ticker, fiscal_period="FY", metric__in=PEER_METRICS
        )
        latest = annual.aggregate(latest=Max("fiscal_year"))["latest"]
        if latest is not None:
            chosen += list(annual.filter(fiscal_year=latest).order_by("metric"))
    return chosen


def figure_of(fact: FactRecord, *, own: str = "") -> Figure:
    """The fact as a slide prints it; a competitor's (its ticker is not ``own``) is labelled with its
    ticker: "HPQ operating margin"."""
    label = LABELS.get(fact.metric, fact.metric.replace("_", " ").capitalize())
    if is_segment(fact.fact_id) and fact.label:
        label = fact.label  # "Revenue: iPhone", from the filer's member
    ticker = fact.fact_id.split(":", 1)[0]
    if own and ticker != own:
        label = f"{ticker} {label[0].lower()}{label[1:]}"
    return Figure(
        fact_id=fact.fact_id,
        label=label,
        period=fact_period(fact),
        value=str(fact.value),
        unit=fact.unit,
        display=display(fact.value, fact.unit, fact_id=fact.fact_id),
        source=_source(fact),
        url=fact.url,
    )


def _source(fact: FactRecord) -> str:
    if fact.form and fact.filed:
        return f"{fact.form} filed {fact.filed}"
    if fact.source == FactRecord.Source.PRICES:  # a beta or a volatility: computed from the price record
        return "computed by code from daily prices" if fact.derivation else "daily prices"
    if fact.derivation:
        return "derived by code from filed figures"
    return fact.get_source_display()


def data_version(figures: Iterable[Figure]) -> str:
    digest = hashlib.sha256()
    for figure in figures:
        digest.update(f"{figure.fact_id}|{figure.value}|{figure.unit}|{figure.source}\n".encode())
    return digest.hexdigest()
