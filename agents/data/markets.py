"""Prediction markets (Polymarket Gamma ``/markets`` objects) as typed records and SourceDocuments.

Gamma encodes ``outcomes``, ``outcomePrices`` and ``clobTokenIds`` as JSON strings inside the JSON, and gives
amounts twice: as a full-precision string (``liquidity`` "3172.7863") and as a rounded number
(``liquidityNum`` 3172.79). The string is preferred; the number is the fallback when the string is missing.
A market's question is untrusted text and is normalised like any news title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, Json, TypeAdapter, ValidationError

from agents.data.documents import describe_validation, document_id, read_json
from agents.data.errors import MalformedData
from agents.data.types import SourceDocument
from agents.text.untrusted import normalise_text

POLYMARKET_EVENT_URL = "https://polymarket.com/event/"


class MarketOutcome(BaseModel):
    """One outcome and its last price, which is the market's probability for it (0 to 1)."""

    model_config = ConfigDict(frozen=True)

    name: str
    price: Decimal


class PredictionMarket(BaseModel):
    """One Polymarket market as captured: prices are the crowd's probabilities on the ``updated`` day."""

    model_config = ConfigDict(frozen=True)

    market_id: str
    question: str
    slug: str
    url: str
    end_date: date | None
    updated: date | None
    outcomes: tuple[MarketOutcome, ...]
    volume: Decimal | None
    liquidity: Decimal | None
    active: bool
    closed: bool
    clob_token_ids: tuple[str, ...] = Field(default_factory=tuple)


class _GammaEvent(BaseModel):
    slug: str


class _GammaMarket(BaseModel):
    id: str
    question: str
    slug: str
    end_date: datetime | None = Field(default=None, alias="endDate")
    updated_at: datetime | None = Field(default=None, alias="updatedAt")
    outcomes: Json[list[str]]
    outcome_prices: Json[list[Decimal]] = Field(alias="outcomePrices")
    clob_token_ids: Json[list[str]] | None = Field(default=None, alias="clobTokenIds")
    volume: Decimal | None = None
    volume_num: Decimal | None = Field(default=None, alias="volumeNum")
    liquidity: Decimal | None = None
    liquidity_num: Decimal | None = Field(default=None, alias="liquidityNum")
    active: bool = False
    closed: bool = False
    events: list[_GammaEvent] = Field(default_factory=list)


_GAMMA_MARKETS = TypeAdapter(list[_GammaMarket])


def _market_url(raw: _GammaMarket) -> str:
    """Polymarket's page: ``/event/<event>`` for a lone market, ``/event/<event>/<market>`` in an event."""
    event = raw.events[0].slug if raw.events else raw.slug
    return POLYMARKET_EVENT_URL + (event if event == raw.slug else f"{event}/{raw.slug}")


def _market(raw: _GammaMarket, *, where: str) -> PredictionMarket:
    if len(raw.outcomes) != len(raw.outcome_prices):
        raise MalformedData(
            f"{where}: market {raw.id} has {len(raw.outcomes)} outcomes but {len(raw.outcome_prices)} prices"
        )
    return PredictionMarket(
        market_id=raw.id,
        question=" ".join(normalise_text(raw.question).split()),
        slug=raw.slug,
        url=_market_url(raw),
        end_date=raw.end_date.date() if raw.end_date else None,
        updated=raw.updated_at.date() if raw.updated_at else None,
        outcomes=tuple(
            MarketOutcome(name=normalise_text(name), price=price)
            for name, price in zip(raw.outcomes, raw.outcome_prices, strict=True)
        ),
        volume=raw.volume if raw.volume is not None else raw.volume_num,
        liquidity=raw.liquidity if raw.liquidity is not None else raw.liquidity_num,
        active=raw.active,
        closed=raw.closed,
        clob_token_ids=tuple(raw.clob_token_ids or ()),
    )


def parse_gamma_markets(payload: object, *, where: str) -> list[PredictionMarket]:
    """Markets from a parsed Gamma ``/markets`` response (a JSON list); ``where`` names it in errors."""
    try:
        raw_markets = _GAMMA_MARKETS.validate_python(payload)
    except ValidationError as exc:
        raise MalformedData(
            f"{where} is not a list of Polymarket markets: {describe_validation(exc)}"
        ) from exc
    return [_market(raw, where=where) for raw in raw_markets]


def _percent(price: Decimal) -> str:
    return f"{(price * 100).normalize():f}%"


def market_document(market: PredictionMarket, *, tickers: tuple[str, ...] = ()) -> SourceDocument:
    """The market as untrusted text: its question and each outcome's probability, dated by its last update.

    ``tickers`` links the market to companies (Gamma does not); the caller decides, for example after
    ``search("NVIDIA")``.
    """
    odds = ", ".join(f"{outcome.name} {_percent(outcome.price)}" for outcome in market.outcomes)
    closes = f"\nMarket closes {market.end_date.isoformat()}." if market.end_date else ""
    return SourceDocument(
        doc_id=document_id("market", f"polymarket:{market.market_id}"),
        kind="prediction-market",
        title=market.question,
        url=market.url,
        published=market.updated,
        source="Polymarket",
        text=f"{market.question}\nMarket probabilities: {odds}.{closes}",
        tickers=tickers,
    )


def _unique(markets: Iterable[PredictionMarket]) -> list[PredictionMarket]:
    by_id: dict[str, PredictionMarket] = {}
    for market in markets:
        by_id.setdefault(market.market_id, market)
    return list(by_id.values())


class SnapshotMarketSource:
    """Each ``root/prediction_markets/*.json`` capture, by file name; a market in two files counts once."""

    def __init__(self, root: Path) -> None:
        self._directory = root / "prediction_markets"

    def markets(self) -> list[PredictionMarket]:
        return list(self._loaded)

    @cached_property
    def _loaded(self) -> list[PredictionMarket]:
        paths = sorted(self._directory.glob("*.json"))
        if not paths:
            raise MalformedData(f"{self._directory} holds no prediction-market JSON files")
        return _unique(
            market for path in paths for market in parse_gamma_markets(read_json(path), where=str(path))
        )

    def search(self, keyword: str) -> list[PredictionMarket]:
        """Markets whose question contains ``keyword`` as a whole word, ignoring case ("NVIDIA", "Solana")."""
        if not keyword.strip():
            raise ValueError("a market search needs a keyword")
        pattern = re.compile(r"(?<!\w)" + re.escape(keyword.strip()) + r"(?!\w)", re.IGNORECASE)
        return [market for market in self.markets() if pattern.search(market.question)]
