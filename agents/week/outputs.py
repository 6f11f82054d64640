"""The week's step documents and its digest, as code writes them (nothing here is a model's): each run the
week started is a ``Part``, with what it froze and what it cost."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class FigureOut(_Frozen):
    text: str  # as code prints it: "-4.21%"
    fact_id: str
    value: float | None = None


class Part(_Frozen):
    """A run the week started as its part, as the week last read it."""

    workflow: str
    run_id: str
    status: str  # the run's status: done, needs_review, failed, ...
    message: str  # its status line
    version_id: int | None = None  # what it froze
    version_label: str = ""  # "memo v3"
    partial: bool = False  # what it froze lacks parts that did not finish
    # Seed 003: each verdict of the work's own model family, badged as its version froze it.
    badges: list[str] = Field(default_factory=list)
    calls: int = 0  # its LLM calls, answered by the model or from the ledger
    paid_calls: int = 0  # those the model was asked for (not answered from the ledger)
    tokens: int = 0
    wall_s: float | None = None

    @property
    def finished(self) -> bool:
        """It froze a whole version: done, or ended needing review for its verdict (a memo its evaluator
        sent back is finished work with a verdict); failed, partial or nothing frozen is not finished."""
        return self.version_id is not None and not self.partial and self.status in ("done", "needs_review")


class Name(_Frozen):
    """A flagged name of the week's screen."""

    symbol: str
    name: str
    sector: str
    flag: str
    reason: str  # the screen's, as frozen
    alpha_1w: FigureOut | None = None


class Skipped(_Frozen):
    symbol: str
    reason: str


class ScreenOutput(_Frozen):
    """The week's screen: its run, what it froze, and what the week reads of it."""

    part: Part | None
    as_of: date | None = None
    flags: dict[str, int] = Field(default_factory=dict)
    flagged: list[Name] = Field(default_factory=list)  # RED and YELLOW names, in the screen's order
    market: str = ""  # the market's week, in code's words
    market_figures: list[FigureOut] = Field(default_factory=list)
    problem: str = ""  # why the week has no screen to read ("" when it has)


class Chosen(_Frozen):
    name: Name
    rank: int
    question: str  # written by code from the flag: the memo's focus
    gaps: list[str] = Field(default_factory=list)  # what the desk lacks for it, declared


class NamesOutput(_Frozen):
    bound: int
    chosen: list[Chosen]
    skipped: list[Skipped]


class LookOutput(_Frozen):
    """A closer look (a quick memo) at one chosen name."""

    symbol: str
    part: Part | None = None
    recommendation: str = ""
    sizing: str = ""
    drift: list[str] = Field(default_factory=list)
    previous: str = ""  # the memo it was compared with ("v2"), "" for a first memo
    gaps: list[str] = Field(default_factory=list)
    skipped: str = ""  # why no memo started ("" when one did)


class DeckOut(_Frozen):
    symbol: str
    brief_id: int
    title: str
    part: Part | None = None
    line: str = ""  # the cycle's version in one line, by code
    skipped: str = ""


class DecksOutput(_Frozen):
    decks: list[DeckOut]
    note: str = ""  # why no deck was refreshed, when none was


class Unfinished(_Frozen):
    what: str
    reason: str


class DigestOutput(_Frozen):
    """The week in one document: the market's week, the flags, each flagged name's recommendation and drift,
    every new version, what did not finish, and what the week cost."""

    as_of: date | None
    screen: ScreenOutput
    names: NamesOutput | None
    looks: list[LookOutput]
    decks: list[DeckOut]
    unfinished: list[Unfinished]
    llm_calls: int
    paid_calls: int
    tokens: int
    budget_tokens: int | None
    wall_s: float
