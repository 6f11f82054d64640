"""What each role of the agency answers: the JSON schemas the gateway enforces (narrowed per run by
``agents.agency.narrowing``: citations become enums of the ids the role was shown, prose admits digits
only inside ``[[fact id]]`` references).

Models write words and pick ids; code owns every figure (a reference is rendered from the fact store), every
total, every rank and every check of a quote. Each string and list is bounded so the longest answer fits the
prompt's ``max_tokens``; prompts ask for about half of each bound.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.agency.personas import Risk

Statement = Annotated[str, Field(min_length=1, max_length=280)]
Line = Annotated[str, Field(min_length=1, max_length=200)]
Quote = Annotated[str, Field(min_length=1, max_length=240)]
Position = Literal["support", "conditional", "oppose"]
POSITIONS: tuple[Position, ...] = ("support", "conditional", "oppose")
# What a move does, from a fixed list: with its target, the key that merges duplicates (seed 003's
# dedup_key, normalised by code, never judged by a model).
Action = Literal[
    "invest",
    "acquire",
    "partner",
    "divest",
    "enter_market",
    "launch_product",
    "reprice",
    "cut_costs",
    "restructure",
    "return_capital",
    "raise_capital",
    "reduce_debt",
    "hedge",
    "lobby_or_comply",
    "communicate",
]
METRICS: tuple[str, ...] = ("impact", "feasibility", "risk_adjusted_return", "strategic_alignment")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InferenceClaim(_Strict):
    """One thing the data implies, with the ids it rests on."""

    statement: Statement
    citations: list[str] = Field(min_length=1, max_length=4)


class Inference(_Strict):
    """F1 (financial inference) or F2 (trend and sentiment inference): layer 1."""

    claims: list[InferenceClaim] = Field(max_length=8)
    gaps: list[Line] = Field(min_length=1, max_length=4)  # what the data does not say: declared, never filled


class MoveDraft(_Strict):
    """One move as an analyst persona proposes it (a candidate of seed 003's generation fan-out)."""

    action: Action
    target: Annotated[str, Field(min_length=1, max_length=60)]  # what the action is aimed at, in a few words
    title: Annotated[str, Field(min_length=1, max_length=100)]
    move: Annotated[str, Field(min_length=1, max_length=300)]  # what to do, concretely
    reasoning: list[Annotated[str, Field(min_length=1, max_length=350)]] = Field(min_length=2, max_length=3)
    risks: list[Line] = Field(min_length=1, max_length=2)  # what could go wrong, in the proposer's view
    citations: list[str] = Field(min_length=1, max_length=5)  # F1/F2 claim ids


class PersonaMoves(_Strict):
    """A persona's shard: a low, a medium and a high-risk move (one field each, so the schema itself asks
    for one of every level). Generate only: no ranking, no verdict."""

    low: MoveDraft
    medium: MoveDraft
    high: MoveDraft

    def draft(self, risk: Risk) -> MoveDraft:
        found: MoveDraft = getattr(self, risk)
        return found


class CriticPoint(_Strict):
    point: Annotated[str, Field(min_length=1, max_length=300)]
    citations: list[str] = Field(max_length=3)


class CriticTurn(_Strict):
    """The critic's counterpoints: round 1 to all three threads, later rounds to one member."""

    points: list[CriticPoint] = Field(min_length=1, max_length=3)


class BoardTurn(_Strict):
    """A board member's answer in its thread."""

    answers: Quote  # the critic's point it answers, quoted verbatim (code checks the quote)
    reply: Annotated[str, Field(min_length=1, max_length=700)]
    position: Position
    # Where the position moved since the member's last turn: the fact or claim id, or the critic's words
    # (quoted), that moved it. Empty when the position holds.
    moved_by: Annotated[str, Field(max_length=240)]
    citations: list[str] = Field(max_length=3)


class MetricScore(_Strict):
    score: int = Field(ge=0, le=10)
    quote: Quote  # the passage of the move (or the debate) the score rests on, verbatim
    reason: Line


class ScoreCard(_Strict):
    """A board member's four scores of a move (seed 004's table). Code adds them up; a model's total would
    be ignored, so none is asked for."""

    impact: MetricScore
    feasibility: MetricScore
    risk_adjusted_return: MetricScore
    strategic_alignment: MetricScore

    def metric(self, name: str) -> MetricScore:
        score: MetricScore = getattr(self, name)
        return score


class Rejection(_Strict):
    """Seed 003's kill-argument, first thread: the strongest case for rejecting a move, in one memo (about
    two hundred words). It attacks; it rules on nothing."""

    rejection: Annotated[str, Field(min_length=1, max_length=1400)]


Ruling = Literal["stands", "answered", "unsupported"]
RULINGS: tuple[Ruling, ...] = ("stands", "answered", "unsupported")


class Objection(_Strict):
    """One atomic objection of the rejection and the jury's ruling on it (seed 003's kill-argument)."""

    objection: Line
    # stands: the move does not answer it; answered: the move's own material meets it; unsupported: the
    # rejection asserts it with nothing in the move behind it.
    ruling: Ruling
    quote: Quote  # the passage of the move or of the rejection the ruling rests on, word for word


class JuryAudit(_Strict):
    """Seed 003's kill-argument, second thread (fresh, seeing only the move and the rejection): the rejection
    split into atomic objections, each ruled on. No verdict is asked for: code computes it from the
    rulings."""

    objections: list[Objection] = Field(min_length=3, max_length=7)
