"""What each role of the screen answers (seed 002's typed hand-offs), as the JSON schemas the gateway
enforces, narrowed per call by ``agents.screen.narrowing`` (citations an enum of the documents the role was
shown, symbols an enum of the sector's, prose admitting digits only inside ``[[fact id]]`` references).

Models write words and pick ids and flags; code owns every figure, the evidence quality's ceiling and every
flag's floor (agents.screen.flags). Each string and list is bounded to fit the prompt's ``max_tokens``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.screen.flags import Evidence, Flag

Text = Annotated[str, Field(min_length=1, max_length=600)]
Line = Annotated[str, Field(min_length=1, max_length=200)]
DriverType = Literal["transient", "structural"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Event(_Strict):
    event: Line
    citations: list[str] = Field(min_length=1, max_length=3)


class MarketOverview(_Strict):
    """The news analyst's market overview: the week's broad drivers, each citing documents."""

    summary: Text
    key_events: list[Event] = Field(max_length=4)
    evidence_quality: Evidence


class Driver(_Strict):
    driver: Line
    type: DriverType
    evidence: Line  # what the cited documents say, in the analyst's words
    citations: list[str] = Field(min_length=1, max_length=4)
    affected_symbols: list[str] = Field(max_length=12)


class SectorNews(_Strict):
    """The news analyst's reading of one sector (per sector, never per symbol)."""

    news_summary: Text
    evidence_quality: Evidence
    key_drivers: list[Driver] = Field(max_length=4)


Short = Annotated[str, Field(min_length=1, max_length=90)]
Reason = Annotated[str, Field(min_length=1, max_length=160)]


class SymbolCall(_Strict):
    """The senior analyst's proposal for one symbol: a flag (code checks it against the protocol), words.
    Short: a sector's call carries up to forty of these, and the embedded model writes about five tokens a
    second when three calls share it."""

    symbol: str
    flag: Flag
    flag_reason: Reason
    bullish_signals: list[Short] = Field(max_length=2)
    bearish_signals: list[Short] = Field(max_length=2)
    key_concern: Reason


class SectorSynthesis(_Strict):
    """The senior analyst on one sector: the quant view and the news view merged; it never fetches or
    computes, only synthesises what the specialists handed over."""

    synthesis: Text
    drop_type: Literal["transient", "structural", "unclear"]
    confidence: Literal["low", "medium", "high"]
    symbols: list[SymbolCall] = Field(max_length=40)


class OverallSynthesis(_Strict):
    """The senior analyst across sectors: the week's themes and how the sectors relate."""

    market_view: Text
    themes: list[Line] = Field(min_length=1, max_length=4)


class FlagChange(_Strict):
    symbol: str
    to: Flag
    reason: Line


class SendBack(_Strict):
    """A sector the managing director finds inconsistent (its flags or synthesis against its evidence): the
    senior analyst rewrites it once (memos.pipeline.screen.revisits)."""

    sector: str
    reason: Line


# The most sectors one review may send back: each costs one more call, said with the run's call bound.
SEND_BACKS = 2


class DirectorReview(_Strict):
    """The managing director, who alone sees everything: consistency, blind spots, concentration, the
    executive summary, flag changes with reasons (code refuses those the protocol does not admit)."""

    quality_score: int = Field(ge=0, le=10)
    quality_rationale: Text
    flag_adjustments: list[FlagChange] = Field(max_length=10)
    strongest_candidates: list[str] = Field(max_length=5)
    weakest_candidates: list[str] = Field(max_length=5)
    blind_spots: list[Line] = Field(max_length=4)
    executive_summary: Text
    portfolio_note: Line
    inconsistent_sectors: list[SendBack] = Field(default_factory=list, max_length=SEND_BACKS)
