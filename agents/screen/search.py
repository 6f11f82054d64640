"""The news analyst's search plan, by code (seed 002: search per sector, never per symbol; effort where the
alpha is): a market overview, two queries per sector, a third where the sector's mean |alpha| is past the
sector threshold, and a deep dive on the symbols whose own |alpha| is past the deep-dive threshold.

A query says what it looks for in words a reader can check ("Utilities: posts on DUK, NEE, ... in the week
to 2015-08-21"), which symbols it covers and how many results it keeps. The searcher (the desk's documents
in snapshot mode, a configured search API in live mode) answers it; the model only reads what came back.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.screen.config import NewsEffort, Thresholds
from agents.screen.quant import SectorGroup, SymbolProfile

QueryKind = Literal["market", "posts", "news", "deep_dive"]
# Words of market-wide news, for the overview query over the desk's documents.
MARKET_WORDS = (
    "market",
    "stocks",
    "selloff",
    "sell-off",
    "correction",
    "s&p",
    "dow",
    "nasdaq",
    "fed",
    "rates",
    "economy",
    "recession",
    "volatility",
)


class Query(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: QueryKind
    text: str  # what it looks for, as the run page shows it
    terms: str  # what a live search API is asked
    sector: str  # "" for the market overview
    symbols: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    start: date
    end: date
    limit: int


def window(as_of: date, effort: NewsEffort) -> tuple[date, date]:
    return as_of - timedelta(days=effort.window_days - 1), as_of


def overview_queries(as_of: date, effort: NewsEffort, symbols: Sequence[str]) -> list[Query]:
    """The market overview: the week's market-wide news, then the universe's posts that talk about the
    market; ``overview_queries`` of them at most."""
    start, end = window(as_of, effort)
    queries = [
        Query(
            kind="market",
            text=f"Market-wide news in the week to {end}",
            terms="stock market week",
            sector="",
            words=MARKET_WORDS,
            start=start,
            end=end,
            limit=effort.results_per_query,
        ),
        Query(
            kind="posts",
            text=f"Posts on the watchlist that talk about the market, week to {end}",
            terms="",
            sector="",
            symbols=tuple(symbols),
            words=MARKET_WORDS,
            start=start,
            end=end,
            limit=effort.results_per_query,
        ),
        Query(
            kind="market",
            text=f"Market-wide news in the month to {end}",
            terms="stock market sell-off",
            sector="",
            words=MARKET_WORDS,
            start=end - timedelta(days=30),
            end=end,
            limit=effort.results_per_query,
        ),
    ]
    return queries[: effort.overview_queries]


def sector_queries(
    group: SectorGroup,
    profiles: Sequence[SymbolProfile],
    *,
    as_of: date,
    effort: NewsEffort,
    thresholds: Thresholds,
) -> list[Query]:
    """Two queries per sector (its news, its symbols' posts); a third when the sector's mean |alpha| is
    significant (and ``queries_per_sector`` allows it); and a deep dive on each symbol whose |alpha| is past
    ``deep_dive_alpha_pct``, in that case only."""
    start, end = window(as_of, effort)
    symbols = tuple(group.symbols)
    queries = [
        Query(
            kind="news",
            text=f"{group.sector}: news on {', '.join(symbols)} in the week to {end}",
            terms=f"{group.sector} stocks {' '.join(symbols[:5])}",
            sector=group.sector,
            symbols=symbols,
            words=(group.sector.lower(),),
            start=start,
            end=end,
            limit=effort.results_per_query,
        ),
        Query(
            kind="posts",
            text=f"{group.sector}: posts on {', '.join(symbols)} in the week to {end}",
            terms="",
            sector=group.sector,
            symbols=symbols,
            start=start,
            end=end,
            limit=effort.results_per_query,
        ),
    ]
    if not group.significant or effort.queries_per_sector < 3:
        return queries
    movers = tuple(
        p.symbol
        for p in profiles
        if p.alpha is not None and abs(p.alpha) * 100 >= thresholds.deep_dive_alpha_pct
    )
    queries.append(
        Query(
            kind="deep_dive",
            text=(
                f"{group.sector}: deep dive on the symbols past the alpha threshold "
                f"({', '.join(movers) or 'none single'}), month to {end}"
            ),
            terms=" OR ".join(movers or symbols[:5]),
            sector=group.sector,
            symbols=movers or symbols,
            start=end - timedelta(days=30),
            end=end,
            limit=effort.results_per_query * 2,
        )
    )
    return queries
