"""The screen's schemas narrowed to one call: citations an enum of the documents the role was shown, symbols
an enum of those it may name, prose under the pattern that admits digits only inside references to the
figures it was shown (agents.text.patterns). A constrained decoder then cannot invent a source, a symbol or
a figure; code checks all three again (memos.pipeline.screen.checks), because not every endpoint enforces
the schema."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from agents.llm.schema import ids_field
from agents.screen.schemas import (
    SEND_BACKS,
    DirectorReview,
    Driver,
    Event,
    FlagChange,
    MarketOverview,
    OverallSynthesis,
    SectorNews,
    SectorSynthesis,
    SendBack,
    SymbolCall,
)
from agents.text.patterns import Prose, patterned

M = TypeVar("M", bound=BaseModel)


def _one_of(values: tuple[str, ...]) -> Any:
    return Literal[values] if values else str


@lru_cache(maxsize=64)
def overview_schema(documents: tuple[str, ...], facts: tuple[str, ...]) -> type[MarketOverview]:
    prose = Prose(facts)
    event: Any = patterned(
        Event,
        prose,
        ["event"],
        class_name="NarrowEvent",
        citations=(list[str], ids_field(documents, min_length=1, max_length=3)),
    )
    answer = patterned(
        MarketOverview,
        prose,
        ["summary"],
        class_name="NarrowMarketOverview",
        key_events=(list[event], Field(max_length=4 if documents else 0)),
    )
    return answer


@lru_cache(maxsize=128)
def sector_news_schema(
    documents: tuple[str, ...], symbols: tuple[str, ...], facts: tuple[str, ...]
) -> type[SectorNews]:
    prose = Prose(facts)
    driver: Any = patterned(
        Driver,
        prose,
        ["driver", "evidence"],
        class_name="NarrowDriver",
        citations=(list[str], ids_field(documents, min_length=1, max_length=4)),
        affected_symbols=(list[str], ids_field(symbols, min_length=0, max_length=len(symbols))),
    )
    answer = patterned(
        SectorNews,
        prose,
        ["news_summary"],
        class_name="NarrowSectorNews",
        key_drivers=(list[driver], Field(max_length=4 if documents else 0)),
    )
    return answer


@lru_cache(maxsize=128)
def synthesis_schema(symbols: tuple[str, ...], facts: tuple[str, ...]) -> type[SectorSynthesis]:
    prose = Prose(facts)
    call: Any = patterned(
        SymbolCall,
        prose,
        ["flag_reason", "bullish_signals", "bearish_signals", "key_concern"],
        class_name="NarrowSymbolCall",
        symbol=(_one_of(symbols), ...),
    )
    answer = patterned(
        SectorSynthesis,
        prose,
        ["synthesis"],
        class_name="NarrowSectorSynthesis",
        symbols=(list[call], Field(min_length=len(symbols), max_length=len(symbols))),
    )
    return answer


@lru_cache(maxsize=64)
def overall_schema(facts: tuple[str, ...]) -> type[OverallSynthesis]:
    return patterned(OverallSynthesis, Prose(facts), ["market_view", "themes"])


@lru_cache(maxsize=64)
def director_schema(
    symbols: tuple[str, ...], facts: tuple[str, ...], sectors: tuple[str, ...] = ()
) -> type[DirectorReview]:
    prose = Prose(facts)
    send_back: Any = patterned(
        SendBack, prose, ["reason"], class_name="NarrowSendBack", sector=(_one_of(sectors), ...)
    )
    change: Any = patterned(
        FlagChange,
        prose,
        ["reason"],
        class_name="NarrowFlagChange",
        symbol=(_one_of(symbols), ...),
    )
    answer = patterned(
        DirectorReview,
        prose,
        ["quality_rationale", "blind_spots", "executive_summary", "portfolio_note"],
        class_name="NarrowDirectorReview",
        flag_adjustments=(list[change], Field(max_length=10)),
        strongest_candidates=(list[str], ids_field(symbols, min_length=0, max_length=5)),
        weakest_candidates=(list[str], ids_field(symbols, min_length=0, max_length=5)),
        inconsistent_sectors=(
            list[send_back],
            Field(default_factory=list, max_length=SEND_BACKS if sectors else 0),
        ),
    )
    return answer
