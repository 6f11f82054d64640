"""What each step of a screen run stores (``AgentStep.output``), after code's checks: the quant hand-off, each
news reading with the queries that fed it, each synthesis, the managing director's review, and the flags
code decided. Everything a page or the frozen version shows is here; no number in it was typed by a model.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.screen.chart import PriceChart
from agents.screen.config import ResolvedUniverse
from agents.screen.flags import Assessed, Evidence, Flag
from agents.screen.portfolio import Portfolio
from agents.screen.quant import QuantOutput
from agents.screen.schemas import DriverType
from agents.screen.search import Query
from agents.screen.summary import ListCheck, Ranked


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class QuantStep(_Frozen):
    universe: ResolvedUniverse
    quant: QuantOutput
    seconds: float  # the quant analyst's own time, code only
    # Seed 003: the managing director on the analysts' model family, said from the first step on.
    same_model_warning: str = ""


class ChartsOutput(_Frozen):
    """Each symbol's price chart points (agents.screen.chart), kept so the dashboard, the report and the
    frozen version draw the same chart without reading a price file again."""

    charts: dict[str, PriceChart]


class Document(_Frozen):
    """A document a query found, as the model was shown it (untrusted text, fenced in the prompt)."""

    doc_id: str
    kind: str
    source: str
    published: date | None
    title: str
    text: str
    about: list[str] = Field(default_factory=list)


class Searched(_Frozen):
    query: Query
    found: list[str]  # document ids, in the order the searcher ranked them
    # Why the search API did not answer this query (its host and path, never its key), "" when it did or
    # none is configured: the query was answered from the desk's own documents alone.
    failed: str = ""


class DriverOut(_Frozen):
    driver: str
    type: DriverType
    evidence: str
    citations: list[str]
    affected_symbols: list[str]


class EventOut(_Frozen):
    event: str
    citations: list[str]


class NewsOutput(_Frozen):
    """The news analyst's reading of one sector ("" for the market overview)."""

    sector: str
    searches: list[Searched]
    documents: list[Document]
    summary: str
    drivers: list[DriverOut] = Field(default_factory=list)
    events: list[EventOut] = Field(default_factory=list)
    claimed: Evidence  # what the model said of its evidence
    ceiling: Evidence  # the most its cited documents support (agents.screen.flags.evidence_ceiling)
    evidence_quality: Evidence  # the lower of the two
    cited: list[str] = Field(default_factory=list)  # distinct documents its kept drivers or events cite
    dropped: list[str] = Field(default_factory=list)  # code's notes on what it withheld
    asked_model: bool = True

    @property
    def transient(self) -> bool:
        return any(driver.type == "transient" for driver in self.drivers)


class SymbolCallOut(_Frozen):
    symbol: str
    proposed: Flag
    flag_reason: str
    bullish_signals: list[str]
    bearish_signals: list[str]
    key_concern: str


class SynthesisOutput(_Frozen):
    """The senior analyst on one sector."""

    sector: str
    synthesis: str
    drop_type: Literal["transient", "structural", "unclear"]
    confidence: Literal["low", "medium", "high"]
    calls: list[SymbolCallOut]
    dropped: list[str] = Field(default_factory=list)
    # The symbols the senior analyst was asked to propose flags for (agents.screen.verdicts.put_to_senior);
    # None in a synthesis written before it was asked about a few: every symbol.
    asked: list[str] | None = None


class OverallOutput(_Frozen):
    market_view: str
    themes: list[str]
    dropped: list[str] = Field(default_factory=list)


class FlagChangeOut(_Frozen):
    symbol: str
    to: Flag
    reason: str


class Revisit(_Frozen):
    """A sector the managing director found inconsistent and sent back to the senior analyst, once."""

    sector: str
    reason: str  # the managing director's, as shown (a typed figure withheld)


class DirectorOutput(_Frozen):
    quality_score: int
    quality_rationale: str
    flag_adjustments: list[FlagChangeOut]
    strongest_candidates: list[str]  # as the managing director named them (code checks them: *_check)
    weakest_candidates: list[str]
    blind_spots: list[str]
    executive_summary: str  # the model's sentences code kept (summary_notes: those it withheld, and why)
    portfolio_note: str
    same_model_warning: str = ""
    dropped: list[str] = Field(default_factory=list)
    # Code's (issue 32, 4); empty in versions frozen before: the portfolio the director read, the lists
    # ranked by the week's own move, its lists checked against them, and the market's week in code's words.
    portfolio: Portfolio | None = None
    strongest: list[Ranked] = Field(default_factory=list)
    weakest: list[Ranked] = Field(default_factory=list)
    strongest_check: ListCheck | None = None
    weakest_check: ListCheck | None = None
    market_week: str = ""
    summary_notes: list[str] = Field(default_factory=list)
    revisits: list[Revisit] = Field(default_factory=list)


class AdjustmentOut(_Frozen):
    before: Flag
    to: Flag
    reason: str
    accepted: bool
    refusal: str


class Assessment(_Frozen):
    """One symbol's line of the screen: its flag by code, and why."""

    symbol: str
    name: str
    sector: str
    flag: Flag
    proposed: Flag | None
    flag_reason: str  # the protocol's sentence (where one applies), then the senior analyst's reason
    split: str  # how much of the week is the market and how much the symbol's own, rendered by code
    evidence_quality: Assessed  # "unread": its sector's news reading did not finish
    code_note: str  # code's line where it overruled the senior analyst, or ""
    adjustment: AdjustmentOut | None = None
    bullish_signals: list[str] = Field(default_factory=list)
    bearish_signals: list[str] = Field(default_factory=list)
    key_concern: str = ""
    sources: list[str] = Field(default_factory=list)  # the sector's cited documents


class SectorView(_Frozen):
    sector: str
    interpretation: str  # by rule, from the quant
    news_summary: str
    evidence_quality: Assessed
    synthesis: str
    drivers: list[DriverOut]
    symbols: list[str]


class Trace(_Frozen):
    """One symbol's assessment traced: each figure to its fact id, each source to its document."""

    symbol: str
    flag: str
    split: str
    figures: dict[str, str]  # what the split states -> the fact id it came from
    sources: list[str]
    model_words: str  # the senior analyst's part of the reason, as shown
    grounded: bool
    problems: list[str]


class Criteria(_Frozen):
    symbols: int
    grounded: int
    sectors: int
    consistent_sectors: int
    split_stated: int
    low_evidence: int
    said_no_catalyst: int
    llm_calls: int
    call_bound: int
    sample: list[Trace]

    @property
    def no_catalyst_share(self) -> float | None:
        return self.said_no_catalyst / self.low_evidence if self.low_evidence else None


class ScreenResult(_Frozen):
    """The flags step: code's decisions over everything the roles handed over."""

    as_of: date
    assessments: list[Assessment]
    sectors: list[SectorView]
    data_note: str  # the managing director's data-constrained note, with the counts ("" when none applies)
    flag_counts: dict[str, int]
    llm_calls: int  # the roles' calls: answered by the model or from the ledger (seed 002's count)
    call_bound: int  # 2 x sectors + 3
    paid_requests: int = (
        0  # requests the model was paid for, re-asks after a cut-off or invalid answer included
    )
    criteria: Criteria | None = None  # seed 002's success criteria, measured by code (agents.screen.criteria)
    portfolio: Portfolio | None = None  # the portfolio under the final flags (agents.screen.portfolio)
    revised: list[str] = Field(default_factory=list)  # sectors whose synthesis the senior analyst revised
