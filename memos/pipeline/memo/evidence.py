"""What each specialist is shown, gathered by code from the fact store: facts and documents with their tiers.

Selections are deterministic (ordered by metric and period, documents by date then id), so the same data gives
the same prompts, the same request hashes, and a rerun that costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import get_args

from django.db.models import Max

from agents.data.formatting import format_value
from agents.memo.evidence import EvidenceItem, document_tier, fact_tier
from agents.memo.readable import fit
from agents.memo.schemas import FundamentalMetric
from memos.cache import cache_key, cached
from memos.models import Company, FactRecord, SourceDocument
from memos.services.holdings import fact_store_version

FUNDAMENTAL_METRICS: tuple[str, ...] = get_args(FundamentalMetric)
PEER_METRICS = ("revenue", "revenue_growth_yoy", "gross_margin", "operating_margin", "rnd_expense")
QUANT_MACRO_METRICS = ("beta", "beta_sector", "volatility_annualised", "return_ytd", "alpha_1w")
REGULATORY_WORDS = re.compile(
    r"antitrust|regulat|lawsuit|litigation|court|\bDOJ\b|\bFTC\b|\bSEC\b|\bEU\b|tariff|probe|fine[ds]?\b|ban\b|policy",
    re.IGNORECASE,
)
MACRO_WORDS = re.compile(
    r"\bFed\b|interest rate|inflation|recession|GDP|election|tariff|economy", re.IGNORECASE
)
YEARS_OF_HISTORY = 3
MAX_PEERS = 4
MAX_DOCUMENTS = 6
DOCUMENT_CHARS = 600
TITLE_CHARS = 160


def fact_item(fact: FactRecord) -> EvidenceItem:
    period = period_label(fact)
    filing = f"{fact.form} filed {fact.filed}" if fact.form and fact.filed else fact.derivation or fact.source
    return EvidenceItem(
        evidence_id=fact.fact_id,
        kind="fact",
        tier=fact_tier(fact.source),
        summary=f"{fact.metric.replace('_', ' ')} {period}: {format_value(fact.value, fact.unit)} ({filing})",
        cue=f"{format_value(fact.value, fact.unit)} ({_short_source(fact)})",
        metric=fact.metric,
        period=period,
        value=str(fact.value),
        as_of=fact.filed or fact.period_end,
    )


def _short_source(fact: FactRecord) -> str:
    if fact.form and fact.filed:
        return f"{fact.form} {fact.filed}"
    return "derived" if fact.derivation else fact.source


def fact_line(item: EvidenceItem) -> str:
    """A fact as a prompt lists it: its id, its tier and its cue (see EvidenceItem.cue)."""
    return f"- {item.evidence_id} [{item.tier}] {item.cue or item.summary}"


def period_label(fact: FactRecord) -> str:
    if fact.fiscal_period == "FY" and fact.fiscal_year:
        return f"FY{fact.fiscal_year}"
    if fact.fiscal_period.startswith("Q") and fact.fiscal_year:
        return f"FY{fact.fiscal_year}{fact.fiscal_period}"
    return f"as of {fact.period_end}"


def document_item(document: SourceDocument) -> EvidenceItem:
    return EvidenceItem(
        evidence_id=document.doc_id,
        kind="document",
        tier=document_tier(document.kind),
        summary=f"{document.kind} · {document.source} · {document.published or 'undated'}: "
        f"{fit(document.title, TITLE_CHARS)}",
        text=document.text[:DOCUMENT_CHARS],
        published=document.published,
        as_of=document.published,
    )


def _annual(company: Company, metrics: Iterable[str], years: int) -> list[FactRecord]:
    facts = FactRecord.objects.filter(company=company, fiscal_period="FY", metric__in=list(metrics))
    latest = facts.aggregate(latest=Max("fiscal_year"))["latest"]
    if latest is None:
        return []
    return list(facts.filter(fiscal_year__gt=latest - years).order_by("metric", "-fiscal_year"))


def _latest_quarter(company: Company) -> list[FactRecord]:
    quarters = FactRecord.objects.filter(
        company=company, fiscal_period__startswith="Q", metric__in=["revenue", "net_income"]
    )
    last = quarters.order_by("-period_end").first()
    return list(quarters.filter(period_end=last.period_end).order_by("metric")) if last else []


def _quant(company: Company, metrics: Iterable[str] | None = None) -> list[FactRecord]:
    facts = FactRecord.objects.filter(company=company, fiscal_period="DAY")
    last = facts.order_by("-period_end").first()
    if last is None:
        return []
    chosen = facts.filter(period_end=last.period_end)
    if metrics is not None:
        chosen = chosen.filter(metric__in=list(metrics))
    return list(chosen.order_by("metric"))


def _documents(
    company: Company, pattern: re.Pattern[str] | None = None, kinds: Iterable[str] = ("news",)
) -> list[SourceDocument]:
    about = SourceDocument.objects.filter(tickers__contains=[company.ticker], kind__in=list(kinds))
    chosen = [
        d
        for d in about.order_by("-published", "doc_id")
        if pattern is None or pattern.search(f"{d.title} {d.text}")
    ]
    return chosen[:MAX_DOCUMENTS]


def _fundamentals(company: Company) -> list[EvidenceItem]:
    return [
        fact_item(f)
        for f in _annual(company, FUNDAMENTAL_METRICS, YEARS_OF_HISTORY) + _latest_quarter(company)
    ]


def _competitive(company: Company) -> list[EvidenceItem]:
    items = [fact_item(f) for f in _annual(company, PEER_METRICS, 1)]
    if company.sector:
        peers = (
            Company.objects.filter(sector=company.sector)
            .exclude(pk=company.pk)
            .order_by("ticker")[:MAX_PEERS]
        )
        for peer in peers:
            items.extend(fact_item(f) for f in _annual(peer, PEER_METRICS, 1))
    return items


def _macro(company: Company) -> list[EvidenceItem]:
    markets = SourceDocument.objects.filter(kind="prediction-market").order_by("-published", "doc_id")
    relevant = [d for d in markets if MACRO_WORDS.search(f"{d.title} {d.text}")][:MAX_DOCUMENTS]
    return [fact_item(f) for f in _quant(company, QUANT_MACRO_METRICS)] + [document_item(d) for d in relevant]


def _regulatory(company: Company) -> list[EvidenceItem]:
    return [document_item(d) for d in _documents(company, REGULATORY_WORDS, kinds=("news", "filing"))]


def _quant_items(company: Company) -> list[EvidenceItem]:
    return [fact_item(f) for f in _quant(company)]


def _news(company: Company) -> list[EvidenceItem]:
    # News and sentiment: articles about the company, and prediction markets that name it (what people bet
    # on is sentiment too, and for some demo companies the only licensed signal the snapshot holds).
    return [document_item(d) for d in _documents(company, kinds=("news", "prediction-market"))]


SELECTORS: dict[str, Callable[[Company], list[EvidenceItem]]] = {
    "fundamentals": _fundamentals,
    "competitive": _competitive,
    "macro": _macro,
    "regulatory": _regulatory,
    "quant": _quant_items,
    "news": _news,
}


def evidence_for(company: Company, specialist: str) -> list[EvidenceItem]:
    return SELECTORS[specialist](company)


def select_evidence(company: Company, roster: Iterable[str]) -> dict[str, list[EvidenceItem]]:
    """A fresh selection from the fact store (some twenty queries); rehearsal scripts read it first."""
    return {name: evidence_for(company, name) for name in roster}


def current_evidence(company: Company, roster: Iterable[str]) -> dict[str, list[EvidenceItem]]:
    """``select_evidence`` for the store as it stands, which the data stage freezes: kept in the shared cache
    under the store's version, so the next run on the company while nothing was loaded reads it in one query
    and one cache hit. The version is read first: a selection made after a later write is at worst newer
    than its key says, never older."""
    names = list(roster)
    key = cache_key("evidence", fact_store_version(), company.pk, ",".join(names))
    return cached(key, lambda: select_evidence(company, names), type_=dict)


def fact_lines(items: Iterable[EvidenceItem]) -> str:
    lines = [fact_line(item) for item in items if item.kind == "fact"]
    return "\n".join(lines) or "(no figures for this domain)"


def document_block(items: Iterable[EvidenceItem]) -> str:
    blocks = [
        f"[{item.evidence_id}] ({item.tier}) {item.summary}\n{item.text}"
        for item in items
        if item.kind == "document"
    ]
    return "\n\n".join(blocks) or "(no documents for this domain)"
