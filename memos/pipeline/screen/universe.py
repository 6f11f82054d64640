"""Where a screen's symbols, names, sectors and prices come from: the strategy's own tables first, the bundled
stocknet universe's StockTable for a stocknet strategy, the desk's company rows for names, then the override
table and name keywords (agents.screen.sectors). Prices are read from the strategy's own folder, then the
snapshot's price files, then the stocknet universe's."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings

from agents.data.errors import DataError
from agents.data.prices import PriceFolders, PriceSeries
from agents.data.universe import Listing, StocknetUniverse
from agents.screen.config import ResolvedUniverse, Strategy
from agents.screen.sectors import sector_of
from memos.models import Company


def _snapshot() -> Path:
    return Path(settings.SNAPSHOT_DIR)


@lru_cache(maxsize=4)
def _stocknet(root: Path) -> tuple[Listing, ...]:
    return tuple(StocknetUniverse(root / "stocknet").listings())


def stocknet_listings() -> tuple[Listing, ...]:
    """The bundled universe's 88 stocks, with their sectors and names (read once per process)."""
    return _stocknet(_snapshot())


def default_symbols(strategy: Strategy) -> list[str]:
    """The symbols a strategy screens: its own list, or every stocknet symbol for a stocknet strategy."""
    if strategy.universe.symbols:
        return list(strategy.universe.symbols)
    return [listing.symbol for listing in stocknet_listings()]


def resolve(strategy: Strategy, symbols: list[str]) -> ResolvedUniverse:
    """Each symbol's name and sector, and the rule that gave the sector."""
    table = dict(strategy.universe.sectors)
    names = dict(strategy.universe.names)
    if strategy.universe.source == "stocknet":
        for listing in stocknet_listings():
            table.setdefault(listing.symbol, listing.sector)
            names.setdefault(listing.symbol, listing.name)
    known = dict(Company.objects.filter(ticker__in=symbols).values_list("ticker", "name"))
    resolved_names = {s: names.get(s) or known.get(s) or s for s in symbols}
    assignments = [sector_of(s, table=table, name=resolved_names[s]) for s in symbols]
    return ResolvedUniverse(
        symbols=list(symbols),
        names=resolved_names,
        sectors={a.symbol: a.sector for a in assignments},
        rules={a.symbol: a.how for a in assignments},
    )


def prices(strategy: Strategy) -> PriceFolders:
    folders = [Path(strategy.universe.prices)] if strategy.universe.prices else []
    root = _snapshot()
    return PriceFolders([*folders, root / "prices" / "daily", root / "stocknet" / "price"])


def unpriced(strategy: Strategy, symbols: list[str]) -> list[str]:
    """The symbols (and the benchmark) no price folder holds: a screen of them would have nothing to say."""
    source = prices(strategy)
    missing = []
    for symbol in [strategy.benchmark, *symbols]:
        try:
            source.path_for(symbol)
        except DataError:
            missing.append(symbol)
    return missing


def series(strategy: Strategy, symbol: str) -> PriceSeries:
    return prices(strategy).series(symbol)
