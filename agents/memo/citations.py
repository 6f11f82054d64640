"""Checking a specialist's citations and merging briefs mechanically (seed 003: dedup is not judgment)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from agents.memo.evidence import EvidenceCatalog, weaker
from agents.memo.schemas import Claim, SpecialistBrief, Tier


@dataclass(frozen=True)
class CheckedClaim:
    """A claim whose citations all resolve, its tier capped by what those sources support."""

    shard_id: str
    claim: Claim
    tier: Tier
    dedup_key: str


@dataclass(frozen=True)
class DroppedClaim:
    shard_id: str
    claim: Claim
    unresolved: tuple[str, ...]


def unresolved_citations(brief: SpecialistBrief, catalog: EvidenceCatalog) -> list[str]:
    return sorted({cid for claim in brief.claims for cid in claim.citations if cid not in catalog})


def check_claims(
    shard_id: str, brief: SpecialistBrief, catalog: EvidenceCatalog
) -> tuple[list[CheckedClaim], list[DroppedClaim]]:
    """Keep claims whose every citation resolves (tier capped by their sources); drop and record the rest."""
    kept: list[CheckedClaim] = []
    dropped: list[DroppedClaim] = []
    for claim in brief.claims:
        missing = tuple(cid for cid in claim.citations if cid not in catalog)
        if missing:
            dropped.append(DroppedClaim(shard_id, claim, missing))
            continue
        tier = weaker(claim.tier, catalog.supported_tier(claim.citations))
        kept.append(CheckedClaim(shard_id, claim, tier, dedup_key(claim)))
    return kept, dropped


_WORDS = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "to",
        "was",
        "were",
        "with",
    ]
)


def dedup_key(claim: Claim) -> str:
    """Layer, sorted citations and the statement's content words: a normalisation rule, not a taste call."""
    text = unicodedata.normalize("NFKC", claim.statement).lower()
    words = [word for word in _WORDS.findall(text) if word not in _STOP]
    return "|".join([claim.layer, ",".join(sorted(set(claim.citations))), " ".join(words)])


@dataclass(frozen=True)
class MergedClaim:
    """One representative of claims sharing a dedup key, with how many shards made it and which."""

    representative: CheckedClaim
    count: int
    shards: tuple[str, ...]


def merge(claims: list[CheckedClaim]) -> list[MergedClaim]:
    """Union of every shard's claims, exact duplicates collapsed; order is the shards' order (no ranking)."""
    groups: dict[str, list[CheckedClaim]] = {}
    for claim in claims:
        groups.setdefault(claim.dedup_key, []).append(claim)
    return [
        MergedClaim(group[0], len(group), tuple(dict.fromkeys(c.shard_id for c in group)))
        for group in groups.values()
    ]
