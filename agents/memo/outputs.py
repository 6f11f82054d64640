"""The typed output of every step of the memo workflow, as stored (JSON) and read back.

One model per kind of step. The run engine stores ``model_dump(mode="json")`` in the step's row and reads it
back with ``model_validate``: no stage or page walks raw JSON. Fields added since a step was written have
defaults, so it reads back; a step whose text outgrew a bound later tightened to fit a token budget
(``agents.memo.bounds``) reads as written by an older desk, which its page says.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from agents.evidence import EvidenceItem, Tier
from agents.memo.audit import AuditReport, FirewallDecision
from agents.memo.catalysts import DroppedCatalyst, Window
from agents.memo.citations import CheckedClaim, DroppedClaim
from agents.memo.contradictions import ClaimContradiction, DirectedClaim, OtherMemo
from agents.memo.escape import EscapeCheck
from agents.memo.falsifiers import DroppedBinding
from agents.memo.gaps import GapCheck
from agents.memo.hillclimb import HillClimbCheck
from agents.memo.opinions import Disagreement, Opinion
from agents.memo.quotes import QuoteCheck
from agents.memo.schemas import (
    Analysis,
    Catalyst,
    Evaluation,
    FalsifierBinding,
    JMinusScores,
    JPlusScores,
    MemoDraft,
    SpecialistBrief,
    SynthesisIteration,
)
from agents.memo.verdict import Verdict
from agents.text.repair import SectionRepair


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
    as_of: date | None = None  # the newest day the evidence speaks for (None: written by an older desk)

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
    trimmed: list[str] = []  # fields that reached their bound mid-sentence, cut back to a whole sentence


class AuditOutput(AuditReport):
    """The fact-stability audit: what it found, the merged claims with their final tiers, tier counts.

    ``directed`` are the specialists' claims code read one direction about one metric and period from, and
    ``claim_contradictions`` the pairs of them pointing opposite ways, and this run's claims that the latest
    memos of other briefs on the company contradict (``compared_with``: the memos compared against)
    (agents.memo.contradictions; all empty in an audit written before these checks)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claims: list[CheckedClaim]
    tiers: dict[Tier, int]
    directed: list[DirectedClaim] = Field(default_factory=list)
    claim_contradictions: list[ClaimContradiction] = Field(default_factory=list)
    compared_with: list[OtherMemo] = Field(default_factory=list)

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
            unsupported_entities=self.unsupported_entities,
            gap_grades=self.gap_grades,
            invented=self.invented,
        )


class Attempt(_Output):
    """One draft of a synthesis iteration (one call), its hill-climb check, the aperture it was asked for,
    and what code found wrong with it (which earned the next draft a correction)."""

    iteration: SynthesisIteration
    hill_climb: HillClimbCheck
    aperture: str
    correction: str = ""  # code's correction this draft was asked with ("" for a first ask)
    problems: list[str] = []  # code's checks this draft failed: catalyst dates, unanswered gaps


class IterationOutput(_Output):
    """A synthesis iteration as code finished it. ``gaps`` says how it answered the previous iteration's
    what-I-missed list; ``dropped_catalysts`` the catalysts still dated outside the window after one
    correction (the memo leaves them out); ``escape`` whether the synthesis stopped after it."""

    final: SynthesisIteration
    hill_climb: HillClimbCheck
    rewritten: bool
    attempts: list[Attempt]
    gaps: list[GapCheck] = []
    dropped_catalysts: list[DroppedCatalyst] = []
    escape: EscapeCheck | None = None
    trimmed: list[str] = []


class SelfScore(_Output):
    iteration: int
    jplus: JPlusScores
    jminus: JMinusScores


class EvaluationOutput(_Output):
    """The evaluation the run's verdict rests on. With a second evaluator configured, ``evaluation``,
    ``verdict`` and ``quotes`` are the kept (more conservative) evaluator's, named by ``kept_role``;
    ``other`` is the other evaluator's opinion, ``disagreements`` where the two part ways, and
    ``other_error`` why the second gave none (the first's verdict then stands alone)."""

    evaluation: Evaluation
    verdict: Verdict
    self_scores: list[SelfScore]
    same_model_warning: str
    quotes: list[QuoteCheck] = []  # one per divergence: found word for word in what was judged, or not
    trimmed: list[str] = []
    kept_role: str = "evaluator"
    other: Opinion | None = None
    disagreements: list[Disagreement] = []
    other_error: str = ""


class Withheld(_Output):
    """Sentences of one section of the memo that code withheld, and what figures they stated."""

    section: str
    sentences: int
    kinds: list[str]  # "a percentage", "an amount", ...: never the figure itself


class MemoOutput(_Output):
    """The memo as code finished it: the firewall's decision, the tiers it rests on, numbers removed.

    ``verdict`` is None when the evaluation failed: the memo is delivered "not evaluated" (``not_evaluated``
    says why) and may not be voted on or published until an evaluation succeeds (``evaluated``); the run
    page offers to re-run that stage alone (memos.pipeline.memo.desk.rerun). ``catalysts`` are those dated
    inside the window (None: written by an older desk, show the draft's); ``withheld`` the sentences code
    withheld for stating figures no fact backs. ``falsifier_bindings`` are the draft's bindings code kept
    (the register watches them once the memo is frozen, memos.pipeline.memo.desk.falsifiers),
    ``dropped_bindings`` the others, with why."""

    memo: MemoDraft
    analysis: Analysis
    firewall: FirewallDecision
    verdict: Verdict | None
    tiers: dict[str, Tier]
    numbers_removed: int
    not_evaluated: str = ""
    catalysts: list[Catalyst] | None = None
    dropped_catalysts: list[DroppedCatalyst] = []
    window: Window | None = None
    withheld: list[Withheld] = []
    iterations: int = 0  # how many synthesis iterations ran (0: written by an older desk)
    stopped_early: str = ""  # the escape valve's reason when the synthesis stopped before its last
    falsifier_bindings: list[FalsifierBinding] = []
    dropped_bindings: list[DroppedBinding] = []
    # What code repaired of each section before a reader sees it (agents.text.repair; empty: an older desk).
    repairs: list[SectionRepair] = []
    # The audit's contradiction checks, frozen with the memo (agents.memo.contradictions): the claims code
    # read a direction from (what a later memo of another brief is compared against), the flags, and the
    # other briefs' memos this one was compared with. Empty: an older desk, or nothing to flag.
    claims: list[DirectedClaim] = []
    contradictions: list[ClaimContradiction] = []
    compared_with: list[OtherMemo] = []

    @property
    def evaluated(self) -> bool:
        """Whether an evaluation stands behind the memo: the gate for votes and publication."""
        return self.verdict is not None

    @property
    def shown_catalysts(self) -> list[Catalyst]:
        return list(self.memo.catalysts) if self.catalysts is None else list(self.catalysts)
