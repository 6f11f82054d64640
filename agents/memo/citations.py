"""Checking a specialist's citations and merging briefs mechanically (seed 003: dedup is not judgment)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from agents.evidence import EvidenceCatalog, Tier, weaker
from agents.memo.schemas import Claim, Layer, SpecialistBrief
from agents.text.blanks import blank_problem
from agents.text.figures import fact_ids_in, removed_count
from agents.text.slots import FILLER, filler_word


class CheckedClaim(BaseModel):
    """A claim whose citations all resolve, its tier capped by what those sources support.

    Stored flat (the claim's own fields beside the checks), as the specialist and audit steps have always
    written it; ``claim`` gives back the claim as the model stated it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    shard_id: str
    layer: Layer
    statement: str
    citations: list[str]
    stated_tier: Tier
    tier: Tier  # after the caps: the sources' support, then the audit
    dedup_key: str

    @classmethod
    def of(cls, shard_id: str, claim: Claim, tier: Tier) -> CheckedClaim:
        return cls(
            shard_id=shard_id,
            layer=claim.layer,
            statement=claim.statement,
            citations=list(claim.citations),
            stated_tier=claim.tier,
            tier=tier,
            dedup_key=dedup_key(claim),
        )

    @property
    def claim(self) -> Claim:
        return Claim(
            layer=self.layer, statement=self.statement, citations=self.citations, tier=self.stated_tier
        )


class DroppedClaim(BaseModel):
    """A claim code dropped: some of its citations resolve to nothing (``unresolved``), or a reader could not
    use its statement (``reason``: a figure's place left empty or filled with a filler, a word repeated)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    statement: str
    unresolved: list[str] = Field(default_factory=list)
    reason: str = ""
    citations: list[str] = Field(default_factory=list)  # a claim dropped for its words: what it cited


def unresolved_citations(brief: SpecialistBrief, catalog: EvidenceCatalog) -> list[str]:
    return sorted({cid for claim in brief.claims for cid in claim.citations if cid not in catalog})


def check_claims(
    shard_id: str, brief: SpecialistBrief, catalog: EvidenceCatalog
) -> tuple[list[CheckedClaim], list[DroppedClaim]]:
    """Keep claims whose every citation resolves (tier capped by their sources) and whose statement a reader
    can use; drop and record the rest. A claim that says nothing where its figure goes is no evidence for
    the synthesizer to build on, whatever it cites."""
    kept: list[CheckedClaim] = []
    dropped: list[DroppedClaim] = []
    for claim in brief.claims:
        missing = tuple(cid for cid in claim.citations if cid not in catalog)
        if missing:
            dropped.append(DroppedClaim(statement=claim.statement, unresolved=list(missing)))
            continue
        unusable = unusable_statement(claim.statement, catalog)
        if unusable:
            dropped.append(
                DroppedClaim(statement=claim.statement, reason=unusable, citations=list(claim.citations))
            )
            continue
        kept.append(
            CheckedClaim.of(shard_id, claim, weaker(claim.tier, catalog.supported_tier(claim.citations)))
        )
    return kept, dropped


def unusable_statement(statement: str, catalog: EvidenceCatalog) -> str:
    """Why a reader could not use a claim's statement (agents.text.blanks, agents.text.slots), or "". A
    statement with a figure typed in it is kept, as before: its page shows it with each typed figure removed
    (and ".463" must not read as a figure's place left empty)."""
    known = {cid for cid in fact_ids_in(statement) if cid in catalog}
    if removed_count(statement, known):
        return ""
    if problem := blank_problem(statement):
        return problem
    return f"{FILLER} ({word!r})" if (word := filler_word(statement)) else ""


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
