"""Typed records the data layer produces: facts (numbers with citations) and source documents.

These are the only way a number enters the system. Agents cite ``Fact.fact_id``; the deck and the memo
render ``Fact.value`` through the fact id, never a number typed by a model.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FiscalPeriod = Literal["FY", "Q1", "Q2", "Q3", "Q4", "INSTANT", "DAY"]
FactSource = Literal["sec-companyfacts", "sec-inline-xbrl", "prices", "derived"]
DocumentKind = Literal["news", "filing", "prediction-market", "social", "other"]


def period_label(fiscal_year: int, fiscal_period: str) -> str:
    """A fiscal year or quarter as a fact's id spells it, and every page and prompt after it: "FY2024" for a
    year (``fiscal_period`` "FY"), "FY2025Q3" for a quarter ("Q3"). Readers parse it back
    (agents.deck.spec.Figure.fiscal), so it is spelled here only."""
    return f"FY{fiscal_year}" if fiscal_period == "FY" else f"FY{fiscal_year}{fiscal_period}"


class Citation(BaseModel):
    """Where a person can check the figure: the filing (or file) that first reported it."""

    model_config = ConfigDict(frozen=True)

    source: FactSource
    url: str
    form: str | None = None
    accession: str | None = None
    filed: date | None = None
    concept: str | None = None
    label: str = ""


class Fact(BaseModel):
    """One number owned by code, with a stable id.

    ``fact_id`` is ``TICKER:metric:period`` (for example ``AAPL:revenue:FY2024``,
    ``AAPL:revenue:FY2025Q2``, ``AAPL:rsi14:2024-12-31``) and never changes for the same figure.
    Derived facts (growth, margins, ratios) name the fact ids they were computed from in ``inputs``.
    """

    model_config = ConfigDict(frozen=True)

    fact_id: str
    ticker: str
    metric: str
    value: Decimal
    unit: str
    period_start: date | None = None
    period_end: date
    fiscal_year: int | None = None
    fiscal_period: FiscalPeriod = "FY"
    citation: Citation
    derivation: str = ""
    inputs: tuple[str, ...] = Field(default_factory=tuple)


class SourceDocument(BaseModel):
    """Untrusted text (news, filing excerpts, market questions), already normalised."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    kind: DocumentKind
    title: str
    url: str
    published: date | None = None
    source: str
    text: str = ""
    tickers: tuple[str, ...] = Field(default_factory=tuple)
