"""What each memo specialist is shown: the shared selections (memos.pipeline.evidence) cut to its
domain, and the whole selection kept in the shared cache under the fact store's version."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from agents.evidence import EvidenceItem
from memos.cache import cache_key, cached
from memos.models import Company, SourceDocument
from memos.pipeline.evidence import (
    FUNDAMENTAL_METRICS,
    MAX_DOCUMENTS,
    QUANT_MACRO_METRICS,
    annual,
    document_item,
    documents,
    fact_item,
    latest_quarter,
    quant,
)
from memos.pipeline.fact_store import fact_store_version

PEER_METRICS = ("revenue", "revenue_growth_yoy", "gross_margin", "operating_margin", "rnd_expense")
REGULATORY_WORDS = re.compile(
    r"antitrust|regulat|lawsuit|litigation|court|\bDOJ\b|\bFTC\b|\bSEC\b|\bEU\b|tariff|probe|fine[ds]?\b|ban\b|policy",
    re.IGNORECASE,
)
MACRO_WORDS = re.compile(
    r"\bFed\b|interest rate|inflation|recession|GDP|election|tariff|economy", re.IGNORECASE
)
YEARS_OF_HISTORY = 3
MAX_PEERS = 4


def _fundamentals(company: Company) -> list[EvidenceItem]:
    return [
        fact_item(f) for f in annual(company, FUNDAMENTAL_METRICS, YEARS_OF_HISTORY) + latest_quarter(company)
    ]


def _competitive(company: Company) -> list[EvidenceItem]:
    items = [fact_item(f) for f in annual(company, PEER_METRICS, 1)]
    if company.sector:
        peers = (
            Company.objects.filter(sector=company.sector)
            .exclude(pk=company.pk)
            .order_by("ticker")[:MAX_PEERS]
        )
        for peer in peers:
            items.extend(fact_item(f) for f in annual(peer, PEER_METRICS, 1))
    return items


def _macro(company: Company) -> list[EvidenceItem]:
    markets = SourceDocument.objects.filter(kind="prediction-market").order_by("-published", "doc_id")
    relevant = [d for d in markets if MACRO_WORDS.search(f"{d.title} {d.text}")][:MAX_DOCUMENTS]
    return [fact_item(f) for f in quant(company, QUANT_MACRO_METRICS)] + [document_item(d) for d in relevant]


def _regulatory(company: Company) -> list[EvidenceItem]:
    return [document_item(d) for d in documents(company, REGULATORY_WORDS, kinds=("news", "filing"))]


def _quant_items(company: Company) -> list[EvidenceItem]:
    return [fact_item(f) for f in quant(company)]


def _news(company: Company) -> list[EvidenceItem]:
    # News and sentiment: articles about the company, and prediction markets that name it (what people bet
    # on is sentiment too, and for some demo companies the only licensed signal the snapshot holds).
    return [document_item(d) for d in documents(company, kinds=("news", "prediction-market"))]


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
