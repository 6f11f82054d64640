"""What each role must answer (seed 000, Appendix A): the JSON schemas the gateway enforces.

Models write prose and pick citation ids; they never write a figure. Prose may reference a fact as
``[[TICKER:metric:period]]``; code renders the value from the fact store and removes any other number.
Confidence tiers a model states are capped by code at what the cited sources support (filed > guided >
anecdotal), and every score rule (hill-climb, verdict, firewall) is computed by code from these fields.

Every string and every list is bounded, and the bounds are sized so the longest answer a schema allows fits
its prompt's ``max_tokens`` (``agents.memo.bounds``; a test checks every prompt): a decoder that enforces
the schema closes a field at its bound, but never has to stop the whole answer half-way. The prompts ask
for about half of each bound, so a bound is headroom, not a target.
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.evidence import FundamentalMetric, Tier

Layer = Literal["MACRO", "MESO", "MICRO"]
EvidenceQuality = Literal["none", "weak", "strong"]
Recommendation = Literal["BUY", "HOLD", "SELL", "WATCH"]
Sizing = Literal["none", "starter", "half", "full"]
Sign = Literal["positive", "negative"]

Statement = Annotated[str, Field(min_length=1, max_length=280)]  # a claim: one or two sentences
ShortText = Annotated[str, Field(min_length=1, max_length=240)]  # one or two sentences
Line = Annotated[str, Field(min_length=1, max_length=200)]  # one sentence: a gap, a falsifier, a lead
Event = Annotated[str, Field(min_length=1, max_length=160)]  # what happens, in a few words
Layered = Annotated[str, Field(min_length=1, max_length=600)]  # one layer of analysis: a short paragraph
Passage = Annotated[str, Field(min_length=1, max_length=400)]  # the memo's thesis, its risk budget
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Claim(_Strict):
    """One load-bearing statement at one layer of analysis, with the evidence ids it rests on."""

    layer: Layer
    statement: Statement
    citations: list[str] = Field(min_length=1, max_length=4)
    tier: Tier


class SpecialistBrief(_Strict):
    """A specialist's whole answer: claims, what it could not cover, and non-obvious second-order links.

    A specialist with no evidence answers ``evidence_quality: none`` with no claims: silence beats filler.
    """

    claims: list[Claim] = Field(max_length=8)
    coverage_gaps: list[Line] = Field(min_length=1, max_length=4)
    undercurrents: list[Line] = Field(max_length=3)
    evidence_quality: EvidenceQuality


# J+ "thesis sharpness" (maximise) and J- "confirmation-bias / pitch-deck penalty" (minimise), 0-2 each.
JPLUS_DIMENSIONS = (
    "causal_mechanism",
    "cross_domain_coupling",
    "named_catalyst",
    "non_consensus",
    "source_anchored",
)
JMINUS_DIMENSIONS = (
    "cherry_picking",
    "hedge_then_recommend",
    "narrative_over_numbers",
    "anchoring_to_price",
    "survivorship_in_analogs",
)

Score = Annotated[int, Field(ge=0, le=2)]
MAX_ITERATIONS = 5  # the most a profile may ask for (agents.memo.roster.MemoConfig)
MAX_DIVERGENCES = 5  # the evaluator quotes its five largest disagreements
# Keep in step with the two tuples above (a test checks it): a Literal needs its values written out.
Dimension = Literal[
    "causal_mechanism",
    "cross_domain_coupling",
    "named_catalyst",
    "non_consensus",
    "source_anchored",
    "cherry_picking",
    "hedge_then_recommend",
    "narrative_over_numbers",
    "anchoring_to_price",
    "survivorship_in_analogs",
]


class JPlusScores(_Strict):
    causal_mechanism: Score
    cross_domain_coupling: Score
    named_catalyst: Score
    non_consensus: Score
    source_anchored: Score

    @property
    def total(self) -> int:
        return sum(getattr(self, name) for name in JPLUS_DIMENSIONS)


class JMinusScores(_Strict):
    cherry_picking: Score
    hedge_then_recommend: Score
    narrative_over_numbers: Score
    anchoring_to_price: Score
    survivorship_in_analogs: Score

    @property
    def total(self) -> int:
        return sum(getattr(self, name) for name in JMINUS_DIMENSIONS)


class Catalyst(_Strict):
    event: Event
    # Declared a date (``format: date``), not a digit pattern: a constrained decoder then writes a month of
    # 01-12 and a day of 01-31 (llama.cpp's grammar has a rule for it, and a pattern would take precedence
    # over it), and the fake server writes a calendar date. Kept as the ISO text the model wrote.
    date: str = Field(
        json_schema_extra={"format": "date"}, description="ISO date the catalyst is expected by"
    )
    expected_sign: Sign

    @field_validator("date")
    @classmethod
    def _a_calendar_date(cls, value: str) -> str:
        # [0-9], not \d: \d also matches full-width and Arabic-Indic digits, which the page would show as
        # typed; and 2026-13-45 has the shape but is no date (fromisoformat raises ValueError: invalid).
        if not ISO_DATE.fullmatch(value):
            raise ValueError("a date is written YYYY-MM-DD")
        datetime.date.fromisoformat(value)
        return value


class Analysis(_Strict):
    macro: Layered
    meso: Layered
    micro: Layered


# What a falsifier may be bound to (seed 000's positions register, memos.pipeline.memo.desk.falsifiers): a
# metric of the fact store and a condition code evaluates against that metric's latest fact when the memo is
# frozen. Both are closed lists: a binding has no number in it, so a model cannot set a threshold; the
# reference value is read by code from the fact store. Fundamentals are filed figures and ratios derived from
# them; the market figures move every session, so only a change of their sign is watched
# (agents.memo.falsifiers).
WatchedMetric = Literal[FundamentalMetric, "return_3m", "return_ytd", "alpha_1w", "sma200_distance_pct"]
Condition = Literal["falls_below_current", "rises_above_current", "turns_negative", "turns_positive"]
MAX_FALSIFIERS = 3
MIN_FALSIFIERS = 2


class FalsifierBinding(_Strict):
    """Ties falsifier number ``falsifier`` (from 1) to a fact-store metric and a condition code checks when
    newer data loads: "revenue_growth_yoy turns_negative". No threshold: the reference is the metric's
    latest fact when the memo is frozen, read by code."""

    falsifier: int = Field(ge=1, le=MAX_FALSIFIERS, description="the falsifier's number in the list, from 1")
    metric: WatchedMetric
    condition: Condition


class MemoDraft(_Strict):
    """The publishable part of an iteration: HEADLINE THESIS, RISK BUDGET, CATALYSTS, FALSIFIERS, SIZING.

    ``falsifier_bindings`` (optional; older answers have none) binds falsifiers that are about one metric
    of the fact store to a condition code watches after the memo is frozen."""

    headline_thesis: Passage
    risk_budget: Passage
    catalysts: list[Catalyst] = Field(min_length=1, max_length=3)
    falsifiers: list[Line] = Field(min_length=MIN_FALSIFIERS, max_length=MAX_FALSIFIERS)
    recommendation: Recommendation
    sizing: Sizing
    sizing_rationale: ShortText
    load_bearing: list[str] = Field(
        min_length=1, max_length=5, description="evidence ids the recommendation rests on"
    )
    falsifier_bindings: list[FalsifierBinding] = Field(default_factory=list, max_length=MAX_FALSIFIERS)


# Where an iteration answered a gap: a part of the memo a reader can compare with the iteration before.
Section = Literal[
    "macro", "meso", "micro", "headline_thesis", "risk_budget", "catalysts", "falsifiers", "sizing"
]
SECTIONS: tuple[Section, ...] = (
    "macro",
    "meso",
    "micro",
    "headline_thesis",
    "risk_budget",
    "catalysts",
    "falsifiers",
    "sizing",
)
GapStatus = Literal["addressed", "out_of_scope"]
MAX_GAPS = 5


class GapAnswer(_Strict):
    """How an iteration answers one item of the previous iteration's what-I-missed list (by its number):
    addressed in a named section (code checks that section changed), or declared out of scope, with why."""

    gap: int = Field(ge=1, le=MAX_GAPS, description="the number of the gap in the previous list, from 1")
    status: GapStatus
    section: Section
    note: Line


class SynthesisIteration(_Strict):
    """One pass of the synthesizer: how it answers the previous pass's gaps, layered analysis, the memo so
    far, its own gaps, and its self-scores."""

    answered_gaps: list[GapAnswer] = Field(default_factory=list, max_length=MAX_GAPS)
    analysis: Analysis
    memo: MemoDraft
    what_i_missed: list[Line] = Field(min_length=3, max_length=MAX_GAPS)
    self_jplus: JPlusScores
    self_jminus: JMinusScores


class Divergence(_Strict):
    """Where the evaluator's calibrated score differs from a self-score, with the passage that shows why."""

    iteration: int = Field(ge=1, le=MAX_ITERATIONS)
    dimension: Dimension  # one of the rubrics' names, never free text: the page shows it as it is
    quote: str = Field(
        min_length=1, max_length=240, description="a passage copied word for word from an iteration"
    )
    justification: Line


class IterationGrade(_Strict):
    iteration: int = Field(ge=1, le=MAX_ITERATIONS)
    jplus: JPlusScores
    jminus: JMinusScores


class Evaluation(_Strict):
    """The evaluator's structured report; code turns it into the verdict and the inflation table."""

    grades: list[IterationGrade] = Field(min_length=1, max_length=MAX_ITERATIONS)
    divergences: list[Divergence] = Field(max_length=MAX_DIVERGENCES)
    inflation_diagnosis: Passage
    next_run_recommendation: Line
