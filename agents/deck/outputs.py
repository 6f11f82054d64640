"""The typed output of every deck step: what the run page draws, what resumes read, what a version freezes."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from agents.deck.gates import Decision, Measured, R1Result, Scored, StopReason
from agents.deck.schemas import R1Judgement, R2Judgement, RubricProposal, Scope, WorkOrder
from agents.deck.spec import Deck, Figure
from agents.deck.watch_slide import MemoCatalyst
from agents.text.repair import SectionRepair


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScopeOutput(_Frozen):
    scope: Scope
    proposal: RubricProposal | None = None  # the rubric builder's brief-specific anchors (None: it failed)
    proposal_error: str = ""
    same_model_warning: str = ""  # the judge shares the drafter's or the reviser's model


class DeckEvidence(_Frozen):
    """The figures the deck may show, built by code from the fact store and frozen for the run."""

    data_version: str
    as_of: date | None = None
    figures: list[Figure]
    # The brief's latest memo version when the data was read, as code quotes it on the risks slide and in
    # the framing's prompt: "memo v3", its final recommendation and sizing, its falsifiers.
    memo_version: str = ""
    memo_recommendation: str = ""
    memo_falsifiers: list[str] = Field(default_factory=list)
    memo_thesis: str = ""  # its headline thesis, its citations as "[[fact id]]"
    memo_catalysts: list[MemoCatalyst] = Field(default_factory=list)


class Finding(_Frozen):
    """A lint or humanizer finding, as the run page lists it."""

    rule: str
    slide: int
    shape: str = ""
    message: str


class Candidate(_Frozen):
    """One deck rendered to PPTX and PDF and measured by code: fact-check, coverage, lint, humanizer."""

    deck: Deck
    measured: Measured
    unresolved: list[str] = Field(default_factory=list)
    withheld: list[str] = Field(default_factory=list)
    # Bullets whose words their own figures contradict, withheld: "slide 3: bullet 1: it says ... but ...".
    contradicted: list[str] = Field(default_factory=list)
    # Sentences in which code wrote a typed number as the figure that backs it: "slide 3: bullet 1".
    resolved: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    trimmed: list[str] = Field(default_factory=list)  # texts cut at their bound, cut back to a whole sentence
    mismatches: list[str] = Field(default_factory=list)  # "pdf slide 3: USD 1 M, expected USD 2 M"
    lint: list[Finding] = Field(default_factory=list)
    humanizer: list[Finding] = Field(default_factory=list)
    pages: int = 0  # PDF pages (== slides)


class QuoteCheck(_Frozen):
    dimension: str
    quote: str
    found: bool  # verbatim in the deck's text (code's check)


class DraftOutput(_Frozen):
    """A first draft (or a rebuild) and the R1 gate's verdict on it."""

    attempt: int
    # What code repaired of each slide's words before building the candidate: the drafter asked once about
    # the sentences resolution would withhold (agents.text.repair; empty: an older desk, or nothing to ask).
    repairs: list[SectionRepair] = Field(default_factory=list)
    candidate: Candidate
    judgement: R1Judgement | None = None  # None: a hard gate failed, so the judge was not asked
    quotes: list[QuoteCheck] = Field(default_factory=list)
    r1: R1Result


class Epoch(_Frozen):
    """Seed 001 section 5: scores compare only within one (rubric version, data version) pair."""

    rubric_version: str
    data_version: str


class BaselineOutput(_Frozen):
    """The refinement loop's starting point: the accepted draft scored on R2 in a fresh epoch."""

    epoch: Epoch
    deck: Deck
    scored: Scored
    judgement: R2Judgement
    quotes: list[QuoteCheck]
    findings: list[Finding] = Field(default_factory=list)  # lint and humanizer findings on the deck
    # A refinement cycle: carried over from its base version in the same epoch (no judge call), or re-scored
    # because the epoch changed (then ``previous_epoch`` is the base version's).
    carried: bool = False
    previous_epoch: Epoch | None = None
    # Seed 001 section 2: the pinned R2 version passed its check against human gold scores on the scorer
    # model configured when the epoch began (memos.pipeline.deck.desk.calibration); None for an older output.
    calibrated: bool | None = None


class LapOutput(_Frozen):
    """One lap: the work order, the reviser's candidate, the judge's scores, T11's re-score and code's
    decision."""

    lap: int
    work_order: WorkOrder | None = None  # None: the planner's answer failed (the lap is rejected)
    changed: list[int]  # slide numbers the reviser's answer changed (only the work order's)
    ignored: list[int] = Field(default_factory=list)  # slides it tried to change outside the work order
    candidate: Candidate | None = None  # None: the revision could not be rendered or judged
    judgement: R2Judgement | None = None
    quotes: list[QuoteCheck] = Field(default_factory=list)
    scored: Scored | None = None
    rescored: dict[str, int] = Field(default_factory=dict)  # T11: the unchanged best, scored again
    drift: list[str] = Field(default_factory=list)
    decision: Decision
    best: float  # R2 of the best-so-far after this lap
    stop: StopReason = ""
    # A repull that found new data in the fact store: the lap opened a new epoch with these figures.
    data_version: str = ""
    figures: list[Figure] = Field(default_factory=list)
    error: str = ""  # why the lap produced no candidate
    note: str = ""  # a slide added or removed, with the reviser's reason (agents.deck.revise.Applied.note)


class ChangelogEntry(_Frozen):
    lap: int
    action: str
    target: str
    accepted: bool
    margin: float
    reasons: list[str]
    note: str = ""


class DeckOutput(_Frozen):
    """The run's deck: the best version, how it was reached, and whether it cleared the entry bar."""

    deck: Deck
    escalated: bool  # R1's rebuild budget ran out: "can't clear the entry bar"
    r1: R1Result
    r2: Scored | None = None
    epoch: Epoch | None = None
    stop: StopReason = ""
    changelog: list[ChangelogEntry] = Field(default_factory=list)
    laps: int = 0
    # The best's judgement and findings: a later refinement cycle in the same epoch starts from them without
    # asking the judge again.
    judgement: R2Judgement | None = None
    findings: list[Finding] = Field(default_factory=list)
    base_version: int | None = None  # a refinement cycle: the version it continued from
    unchanged: bool = False  # a cycle that accepted nothing in the same epoch: nothing new is frozen
    # Sentences code withheld from the delivered deck for slipping into another script than the brief's,
    # which no lap was left to fix: "slide 3: bullet 1 (Han '市场')" (agents.deck.slips).
    withheld: list[str] = Field(default_factory=list)
