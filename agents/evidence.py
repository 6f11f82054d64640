"""Evidence a role may cite: facts (code-owned numbers) and source documents (untrusted text), each with
the confidence tier its source supports. Tiers follow source primacy (seed 000 Appendix A): filed > guided >
anecdotal."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict

# The fundamentals: filed figures and the ratios code derives from them. Every workflow's evidence
# shows them (memos.pipeline.evidence); the memo's falsifiers may bind to them (agents.memo.schemas).
Tier = Literal["HIGH", "MEDIUM", "LOW"]  # filed > guided > anecdotal
FundamentalMetric = Literal[
    "revenue",
    "gross_profit",
    "operating_income",
    "net_income",
    "rnd_expense",
    "operating_cash_flow",
    "capex",
    "cash",
    "total_liabilities",
    "stockholders_equity",
    "eps_diluted",
    "revenue_growth_yoy",
    "gross_margin",
    "operating_margin",
    "net_margin",
    "fcf",
]

TIER_RANK: dict[str, int] = {"LOW": 0, "MEDIUM": 1, "HIGH": 2}
EvidenceKind = Literal["fact", "document"]

# Filed financials and figures computed from them or from observed market prices are HIGH; a prediction
# market is a priced consensus (MEDIUM, like sell-side consensus); filing text is management's own account
# (MEDIUM, like guidance); press reports are unconfirmed (LOW).
_FACT_TIER: dict[str, Tier] = {
    "sec-companyfacts": "HIGH",
    "sec-inline-xbrl": "HIGH",
    "derived": "HIGH",
    "prices": "HIGH",
}
_DOCUMENT_TIER: dict[str, Tier] = {
    "filing": "MEDIUM",
    "prediction-market": "MEDIUM",
    "news": "LOW",
    "social": "LOW",  # a post is one person's view
}


class EvidenceItem(BaseModel):
    """One citable id with what a prompt shows of it and the tier it supports; frozen into the data stage's
    output, so every later stage reads exactly what the specialists were shown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    kind: EvidenceKind
    tier: Tier
    summary: str  # trusted one-line description written by code (for a fact: metric, period, value, filing)
    # What a prompt shows after a fact's id (its value and where it was filed): the id already names the
    # metric and the period, and every token a 2-core model server reads costs time. Empty in evidence
    # frozen before it existed; prompts then show the summary.
    cue: str = ""
    text: str = ""  # untrusted body (documents only): goes into prompts inside nonce fences
    metric: str = ""
    period: str = ""
    value: str = ""
    unit: str = ""  # the fact store's unit (USD, percent, pure ...); "" in evidence frozen before it existed
    published: date | None = None
    # The day the item speaks for: a filing's filed date, a price session, a document's publication. The
    # newest one over a run's evidence is the data's as-of date (catalysts must come after it).
    as_of: date | None = None


def fact_tier(source: str) -> Tier:
    return _FACT_TIER.get(source, "MEDIUM")


def document_tier(kind: str) -> Tier:
    return _DOCUMENT_TIER.get(kind, "LOW")


def weaker(first: Tier, second: Tier) -> Tier:
    return first if TIER_RANK[first] <= TIER_RANK[second] else second


@dataclass
class EvidenceCatalog:
    """Every id a run may cite, for resolving citations and tiering claims."""

    items: dict[str, EvidenceItem] = field(default_factory=dict)

    @classmethod
    def of(cls, items: Iterable[EvidenceItem]) -> EvidenceCatalog:
        return cls({item.evidence_id: item for item in items})

    def __contains__(self, evidence_id: object) -> bool:
        return evidence_id in self.items

    def get(self, evidence_id: str) -> EvidenceItem | None:
        return self.items.get(evidence_id)

    def supported_tier(self, evidence_ids: Iterable[str]) -> Tier:
        """The strongest tier among the ids: a claim is as good as its best resolving source."""
        tiers = [self.items[i].tier for i in evidence_ids if i in self.items]
        return max(tiers, key=lambda tier: TIER_RANK[tier]) if tiers else "LOW"
