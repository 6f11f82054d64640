"""The fact-stability audit and the LOW-tier firewall, both by code (seed 000, Appendix A).

Where claims cite facts, code compares them: the same metric and period with different values across the
cited facts, or two briefs describing the same figure in opposite directions. Each claim is also read against
every figure it cites (agents.text.figure_claims, the reading the agency's inferences and the deck's bullets
share): a trend word that does not hold at each step of the cited series (or a direction beside growth
rates all on the other side of zero), or a metric named that none of its figures is. Contradicted claims
drop to LOW, and the audit page shows each with code's reason and the series. Then the
firewall: a BUY or SELL whose load-bearing evidence includes a LOW-tier source becomes WATCH; one that rests
on a contested figure is marked conditional.

Claims without figures are audited too (agents.memo.entities): a name or a date no cited item holds marks
its claim unsupported, and it drops to LOW; each specialist's declared gaps are graded against what the desk
held, and its invented facts (asserting what it declared missing, or names its sources lack) listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.citations import CheckedClaim
from agents.memo.entities import GapGrade, Invented, UnsupportedEntity, grade_gaps, unsupported_entities
from agents.memo.schemas import MemoDraft, Recommendation
from agents.text.directions import said
from agents.text.figure_claims import CitedFigure, cited_figure, read_claim

# The kind of contradiction each rule of the claim reading records.
_KINDS = {"trend": "direction vs figures", "metric": "metric vs figures"}


def direction(statement: str) -> int:
    """+1 for up words only, -1 for down words only, 0 for neither or both (no direction claimed: the audit
    sets it against every fact a claim cites, whatever their metrics; agents.text.directions says why, and
    which words count)."""
    ways = said(statement)
    return 0 if len(ways) != 1 else (1 if "up" in ways else -1)


class Contradiction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str  # "value", "direction vs figure", "direction across briefs"
    evidence_ids: tuple[str, ...]
    shards: tuple[str, ...]
    detail: str


class AuditReport(BaseModel):
    """What the audit found. Built up by the checks below, then stored (inside the audit step's output)."""

    model_config = ConfigDict(extra="forbid")

    contradictions: list[Contradiction] = Field(default_factory=list)
    contested_ids: list[str] = Field(default_factory=list)  # sorted, so equal inputs store equal outputs
    downgraded: list[str] = Field(default_factory=list)  # dedup keys of claims dropped to LOW
    unsupported_entities: list[UnsupportedEntity] = Field(default_factory=list)
    gap_grades: list[GapGrade] = Field(default_factory=list)
    invented: list[Invented] = Field(default_factory=list)

    @property
    def penalties(self) -> int:
        """What counts against the evaluation: claims resting on names or dates their sources lack, and
        claims asserting what their specialist declared missing (one count per claim)."""
        return len(
            {(i.shard_id, i.statement) for i in self.invented}
            | {(u.shard_id, u.statement) for u in self.unsupported_entities}
        )


def audit(
    claims: list[CheckedClaim],
    catalog: EvidenceCatalog,
    *,
    own: Sequence[str] = (),
    gaps: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[CheckedClaim], AuditReport]:
    """Claims with tiers after the audit, and what the audit found. ``own`` are the company's name and
    ticker (a claim may always name them); ``gaps`` each specialist's declared coverage gaps, by shard."""
    report = AuditReport()
    _value_conflicts(claims, catalog, report)
    _direction_conflicts(claims, catalog, report)
    report.unsupported_entities = unsupported_entities(claims, catalog, own=own)
    for shard, declared in sorted((gaps or {}).items()):
        graded, invented = grade_gaps(
            shard,
            declared,
            [c for c in claims if c.shard_id == shard],
            catalog,
            report.unsupported_entities,
        )
        report.gap_grades.extend(graded)
        report.invented.extend(invented)
    unfounded = {(u.shard_id, u.statement) for u in report.unsupported_entities}
    audited: list[CheckedClaim] = []
    for claim in claims:
        marked = (claim.shard_id, claim.statement) in unfounded
        if claim.tier != "LOW" and (_is_contradicted(claim, report) or marked):
            report.downgraded.append(claim.dedup_key)
            audited.append(claim.model_copy(update={"tier": "LOW"}))
        else:
            audited.append(claim)
    report.contested_ids = sorted({cid for c in report.contradictions for cid in c.evidence_ids})
    return audited, report


def _is_contradicted(claim: CheckedClaim, report: AuditReport) -> bool:
    return any(
        claim.shard_id in c.shards and set(claim.claim.citations) & set(c.evidence_ids)
        for c in report.contradictions
    )


def _value_conflicts(claims: list[CheckedClaim], catalog: EvidenceCatalog, report: AuditReport) -> None:
    # (ticker, metric, period) -> the (value, fact id, shard) of every citation of that figure
    figures: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    for claim in claims:
        for cid in claim.claim.citations:
            item = catalog.get(cid)
            if item is not None and item.kind == "fact":
                key = (cid.split(":", 1)[0], item.metric, item.period)
                figures.setdefault(key, []).append((item.value, cid, claim.shard_id))
    for (ticker, metric, period), cited in figures.items():
        values = sorted({value for value, _, _ in cited})
        if len(values) > 1:
            report.contradictions.append(
                Contradiction(
                    kind="value",
                    evidence_ids=tuple(sorted({cid for _, cid, _ in cited})),
                    shards=tuple(sorted({shard for _, _, shard in cited})),
                    detail=f"{ticker} {metric} {period} is cited with different values: {', '.join(values)}",
                )
            )


def _direction_conflicts(claims: list[CheckedClaim], catalog: EvidenceCatalog, report: AuditReport) -> None:
    said: dict[str, dict[int, set[str]]] = {}
    for claim in claims:
        _figure_conflict(claim, catalog, report)
        way = direction(claim.claim.statement)
        if way == 0:
            continue
        for cid in claim.claim.citations:
            item = catalog.get(cid)
            if item is not None and item.kind == "fact":
                said.setdefault(cid, {}).setdefault(way, set()).add(claim.shard_id)
    for cid, ways in said.items():
        if 1 in ways and -1 in ways:
            report.contradictions.append(
                Contradiction(
                    kind="direction across briefs",
                    evidence_ids=(cid,),
                    shards=tuple(sorted(ways[1] | ways[-1])),
                    detail=(
                        f"{', '.join(sorted(ways[1]))} read {cid} as up; "
                        f"{', '.join(sorted(ways[-1]))} as down"
                    ),
                )
            )


def _figure_conflict(claim: CheckedClaim, catalog: EvidenceCatalog, report: AuditReport) -> None:
    """A claim read against every fact it cites: "capex has been increasing" must hold at each step of the
    capex series it cites, and "cash flow" must cite a cash flow, not the cash balance."""
    cited = [
        figure
        for cid in claim.claim.citations
        if (item := catalog.get(cid)) is not None and item.kind == "fact"
        if (figure := _figure(item)) is not None
    ]
    if not cited:
        return
    verdict = read_claim(claim.claim.statement, cited)
    if verdict.kept:
        return
    report.contradictions.append(
        Contradiction(
            kind=_KINDS[verdict.rule],
            evidence_ids=verdict.series or tuple(figure.fact_id for figure in cited),
            shards=(claim.shard_id,),
            detail=f"the {claim.shard_id} brief: {verdict.reason}",
        )
    )


def _figure(item: EvidenceItem) -> CitedFigure | None:
    return cited_figure(
        fact_id=item.evidence_id,
        metric=item.metric,
        period=item.period,
        value=item.value,
        shown=item.cue.split(" (", 1)[0] if item.cue else item.value,
        unit=item.unit,
    )


class FirewallDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    stated: Recommendation
    final: Recommendation
    conditional: bool
    low_tier_ids: tuple[str, ...]
    contested_ids: tuple[str, ...]
    reason: str


def firewall(memo: MemoDraft, catalog: EvidenceCatalog, report: AuditReport) -> FirewallDecision:
    """A LOW-tier source cannot carry BUY/SELL (it becomes WATCH), nor can a sizing of none (no position is
    taken); a contested figure makes it conditional."""
    load_bearing = list(dict.fromkeys(memo.load_bearing))
    low = tuple(i for i in load_bearing if (item := catalog.get(i)) is None or item.tier == "LOW")
    contested = tuple(i for i in load_bearing if i in report.contested_ids)
    final: Recommendation = memo.recommendation
    reasons = []
    if memo.recommendation in ("BUY", "SELL") and low:
        final = "WATCH"
        reasons.append(f"{memo.recommendation} rested on {_low_evidence(low, catalog)}: downgraded to WATCH")
    elif memo.recommendation in ("BUY", "SELL") and memo.sizing == "none":
        # "BUY, sizing none" takes no position: a committee would read the pair as a contradiction.
        final = "WATCH"
        reasons.append(f"{memo.recommendation} was sized none, which takes no position: shown as WATCH")
    conditional = final in ("BUY", "SELL") and bool(contested)
    if conditional:
        reasons.append(f"conditional: the recommendation rests on contested figures ({', '.join(contested)})")
    reason = "; ".join(reasons) or "the recommendation rests on HIGH or MEDIUM evidence only"
    return FirewallDecision(
        stated=memo.recommendation,
        final=final,
        conditional=conditional,
        low_tier_ids=low,
        contested_ids=contested,
        reason=reason,
    )


def _low_evidence(ids: tuple[str, ...], catalog: EvidenceCatalog) -> str:
    """LOW-tier sources by id; ids that resolve to nothing only counted: a model wrote them, and the reason is
    shown on the memo page as code's words (an "id" can be any text, figures and instructions included)."""
    named = [i for i in ids if i in catalog]
    unresolved = len(ids) - len(named)
    parts = [f"LOW-tier evidence ({', '.join(named)})"] if named else []
    if unresolved:
        what = "id that resolves" if unresolved == 1 else "ids that resolve"
        parts.append(f"{unresolved} {what} to no evidence")
    return " and ".join(parts)
