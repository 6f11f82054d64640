"""The typed output of every step of the memo workflow, as stored (JSON) and read back.

One model per kind of step. The run engine stores ``model_dump(mode="json")`` in the step's row and reads it
back with ``model_validate``: no stage or page walks raw JSON. The shapes are the ones the memo workflow has
always stored, so steps written before these models existed read back unchanged.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.memo.audit import AuditReport, FirewallDecision
from agents.memo.citations import CheckedClaim, DroppedClaim
from agents.memo.evidence import EvidenceItem
from agents.memo.hillclimb import HillClimbCheck
from agents.memo.schemas import (
    Analysis,
    Evaluation,
    JMinusScores,
    JPlusScores,
    MemoDraft,
    SpecialistBrief,
    SynthesisIteration,
    Tier,
)
from agents.memo.verdict import Verdict


class _Output(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EvidenceSelection(_Output):
    """What code chose to show one specialist: the items themselves (frozen) and their counts."""

    facts: int
    documents: int
    ids: list[str]
    items: list[EvidenceItem]

    @classmethod
    def of(cls, items: list[EvidenceItem]) -> EvidenceSelection:
        return cls(
            facts=sum(1 for item in items if item.kind == "fact"),
            documents=sum(1 for item in items if item.kind == "document"),
            ids=[item.evidence_id for item in items],
            items=items,
        )


class EvidenceOutput(_Output):
    """The data stage: each specialist's evidence and the hash of all of it (the run's data version)."""

    data_version: str
    specialists: dict[str, EvidenceSelection]

    def by_specialist(self) -> dict[str, list[EvidenceItem]]:
        return {name: list(selection.items) for name, selection in self.specialists.items()}

    def evidence_ids(self) -> set[str]:
        return {cid for selection in self.specialists.values() for cid in selection.ids}


class SpecialistOutput(_Output):
    """One specialist's brief as the model wrote it, and the claims code kept or dropped."""

    brief: SpecialistBrief
    claims: list[CheckedClaim]
    dropped: list[DroppedClaim]
    reasked: bool
    asked_model: bool  # false when there was no evidence in its scope: no model was asked


class AuditOutput(AuditReport):
    """The fact-stability audit: what it found, the merged claims with their final tiers, tier counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claims: list[CheckedClaim]
    tiers: dict[Tier, int]

    @classmethod
    def of(cls, claims: list[CheckedClaim], report: AuditReport) -> AuditOutput:
        tiers: dict[Tier, int] = {
            tier: sum(1 for c in claims if c.tier == tier) for tier in ("HIGH", "MEDIUM", "LOW")
        }
        return cls(**report.model_dump(), claims=claims, tiers=tiers)

    @property
    def report(self) -> AuditReport:
        return AuditReport(
            contradictions=self.contradictions,
            contested_ids=self.contested_ids,
            downgraded=self.downgraded,
        )


class Attempt(_Output):
    """One draft of a synthesis iteration, its hill-climb check and the aperture it was asked for."""

    iteration: SynthesisIteration
    hill_climb: HillClimbCheck
    aperture: str


class IterationOutput(_Output):
    final: SynthesisIteration
    hill_climb: HillClimbCheck
    rewritten: bool
    attempts: list[Attempt]


class SelfScore(_Output):
    iteration: int
    jplus: JPlusScores
    jminus: JMinusScores


class EvaluationOutput(_Output):
    evaluation: Evaluation
    verdict: Verdict
    self_scores: list[SelfScore]
    same_model_warning: str


class MemoOutput(_Output):
    """The memo as code finished it: the firewall's decision, the tiers it rests on, numbers removed."""

    memo: MemoDraft
    analysis: Analysis
    firewall: FirewallDecision
    verdict: Verdict
    tiers: dict[str, Tier]
    numbers_removed: int
