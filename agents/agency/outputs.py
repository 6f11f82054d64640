"""What each step of an agency run stores (AgentStep.output), typed: written by code from the models'
answers after its checks, read back by later stages, the run page and the version."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.agency.board import Member
from agents.agency.feasibility import MoveCheck
from agents.agency.jury import Verdict
from agents.agency.personas import Risk
from agents.agency.schemas import Action, Position, ScoreCard
from agents.evidence import EvidenceItem

SourceKind = Literal["news", "social", "prediction-market", "peer-news", "filing"]


class _Output(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Output):
    """One document layer 0 gathered: untrusted text with its date and where it came from."""

    doc_id: str
    kind: SourceKind
    source: str
    published: date | None
    title: str
    text: str
    about: str  # the ticker it was gathered for (the company, or a competitor)
    stale: bool  # far older than the data's as-of date: shown, marked, never hidden


class SourcesOutput(_Output):
    """Layer 0, by code only: the company's figures and the documents the desk holds about it and its
    peers."""

    ticker: str
    as_of: date | None
    peers: list[str]  # competitors: the same GICS sub-industry
    facts: list[EvidenceItem]
    documents: list[Source]
    gaps: list[str]  # what the desk has no data for, in code's words
    data_version: str
    # Seed 003: the run page's warning when the board scores on the analysts' or the critic's model family.
    same_model_warning: str = ""

    @property
    def stale(self) -> int:
        return sum(1 for document in self.documents if document.stale)


class Claim(_Output):
    claim_id: str  # "F1.3": what moves cite
    statement: str  # as shown: typed figures withheld, references kept for code to render
    citations: list[str]
    # Code's line quoting a cited document, written where every claim F2's model wrote was advice: F2 then
    # says what its documents report (agents.agency.checks.reported), or that they report nothing the desk
    # can state. Marked as code's, not the model's.
    by_code: bool = False


class InferenceOutput(_Output):
    """F1 or F2 (layer 1)."""

    name: Literal["F1", "F2"]
    claims: list[Claim]
    gaps: list[str]
    dropped: list[str] = Field(default_factory=list)  # code's words for each claim it did not keep
    asked_model: bool = True
    # Code's line on each claim merged into an earlier one that says the same (agents.agency.findings).
    merged: list[str] = Field(default_factory=list)
    # F2: each document left out as promotion or spam before F2 read them, and the run's line counting them.
    promotional: list[str] = Field(default_factory=list)
    promotional_note: str = ""


class ProposedMove(_Output):
    """A move as proposed, numbered m1..m15 in the order the personas and risk levels are listed."""

    move_id: str
    persona: str
    risk: Risk
    action: Action
    target: str
    title: str
    move: str
    reasoning: list[str]
    risks: list[str]
    citations: list[str]
    dedup_key: str
    notes: list[str] = Field(default_factory=list)  # what code withheld or dropped, in its words


class ProposalOutput(_Output):
    """One persona's shard (seed 003): three candidate moves, generate only."""

    shard_id: str
    persona: str
    moves: list[ProposedMove]
    dropped: list[str] = Field(default_factory=list)


class DebatedMove(_Output):
    move_id: str
    risk: Risk
    title: str
    persona: str
    credited: list[str]  # every persona that proposed it
    merged: list[str]  # the duplicates collapsed into it


class SetAsideMove(_Output):
    """A move code set aside before the debate (generic, or an acquisition larger than the company can pay
    for), with the reason and the figures that show it."""

    move_id: str
    risk: Risk
    title: str
    credited: list[str]
    merged: list[str]
    check: MoveCheck


class MovesOutput(_Output):
    """The merged union: what the sandbox debates ("15 generated, 13 debated"), what code set aside before
    the debate, and the calls the run now plans."""

    generated: int
    debated: list[DebatedMove]
    set_aside: list[SetAsideMove] = Field(default_factory=list)
    # An acquisition code looked at and debated, with why it was not judged infeasible (move id -> words).
    not_judged: dict[str, str] = Field(default_factory=dict)
    planned_calls: int = 0  # every LLM call of the run, now that duplicates and set-aside moves are out
    bound_calls: int = 0  # the bound planned when the run started (every generated move debated)


class Standing(_Output):
    """Where a board member ended a move's debate."""

    member: Member
    position: Position | None
    changes: int
    supported_changes: int  # changes that cited something new or named the critic's argument


class MemberScores(_Output):
    member: Member
    card: ScoreCard
    total: int  # out of 40, by code
    quotes_found: int  # of the four justifications, how many quote the move or the debate word for word


class DebateOutput(_Output):
    """One move's sandbox: its threads' outcome and the board's scores, blind and final."""

    move_id: str
    rounds: int
    turns: int
    standings: list[Standing]
    blind: list[MemberScores]
    final: list[MemberScores]
    total: int  # out of 120, by code
    blind_total: int
    objection: str  # the strongest objection still standing at the last round, quoted
    objection_by: str


class RankedMove(_Output):
    move_id: str
    rank: int
    total: int
    blind_total: int
    risk: Risk
    persona: str
    title: str
    recommended: bool
    credited: list[str] = Field(default_factory=list)  # every persona that proposed it (the merge's credit)
    merged: int = 0  # the duplicates merged into it


class DebateStats(_Output):
    """What the debate looked like, measured by code (the issue's "measure the debate")."""

    positions: dict[str, int]  # final positions across every thread
    risks: dict[str, int]  # risk levels of the moves debated
    changes: int
    supported_changes: int
    mean_shift: float  # final minus blind total, averaged over moves
    moved_ranks: int  # moves whose rank by final total differs from their rank by blind total


class RankingOutput(_Output):
    ranked: list[RankedMove]
    stats: DebateStats


class JuryOutput(_Output):
    """The optional jury's audit of the recommended moves (seed 003's kill-argument), verdicts by code."""

    verdicts: list[Verdict]
    disagreements: list[str]  # recommended moves the jury would not let through, in code's words
    same_model_warning: str = ""

    @property
    def checked_nothing(self) -> bool:
        """Not one of its rulings quoted words code found: every verdict stands on unchecked objections, so
        "survives" says only that the jury could not check what it raised (seen on the embedded 1.5B)."""
        rulings = [item for verdict in self.verdicts for item in verdict.objections]
        return bool(rulings) and not any(item.quote_found for item in rulings)

    @property
    def unchecked(self) -> list[str]:
        """The moves on which the jury could check nothing: its verdict on them says nothing either way."""
        return [verdict.move_id for verdict in self.verdicts if verdict.outcome == "unchecked"]

    @property
    def summary(self) -> str:
        """The step's line: the moves that survive, never counting one the jury could not check."""
        held = sum(1 for verdict in self.verdicts if verdict.outcome == "survives")
        line = f"{held} of {len(self.verdicts)} recommended moves survive"
        if self.unchecked:
            line += f" · {len(self.unchecked)} unchecked (the jury could check none of its objections)"
        return line
