"""Where a screen's symbols, names, sectors and prices come from: the strategy's own tables first, the bundled
stocknet universe's StockTable for a stocknet strategy, the desk's company rows for names, then the override
table and name keywords (agents.screen.sectors). Prices are read from the strategy's own folder, then the
snapshot's price files, then the stocknet universe's; in live mode with ``SCREEN_LIVE_PRICES``, from the
live price adapter."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings

from agents.data.errors import DataError, UnknownTicker
from agents.data.prices import PriceFolders, PriceSeries, PriceSource
from agents.data.universe import Listing, StocknetUniverse
from agents.screen.config import ResolvedUniverse, Strategy
from agents.screen.sectors import sector_of
from memos.models import Company
from memos.pipeline.data_sources import live_price_source, snapshot_price_folders
from memos.pipeline.screen.settings import screen_settings


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


class LiveFirst:
    """Live mode with ``SCREEN_LIVE_PRICES``: a symbol in the strategy's own folder is read from it, any other
    from the live adapter (a failure is the symbol's problem, said on the run page; never a silent fall
    back to a bundled file that stops years earlier)."""

    def __init__(self, own: PriceFolders | None, live: PriceSource) -> None:
        self.own, self.live = own, live

    def series(self, symbol: str) -> PriceSeries:
        if self.own is not None:
            try:
                return self.own.series(symbol)
            except UnknownTicker:
                pass
        return self.live.series(symbol)


def prices(strategy: Strategy) -> PriceSource:
    own = PriceFolders([Path(strategy.universe.prices)]) if strategy.universe.prices else None
    if screen_settings().live_prices:
        return LiveFirst(own, live_price_source())
    return PriceFolders([*(own.folders if own else ()), *snapshot_price_folders(_snapshot())])


def unpriced(strategy: Strategy, symbols: list[str]) -> list[str]:
    """The symbols (and the benchmark) no price folder holds: a screen of them would have nothing to say.
    In live mode nothing is fetched here (a run is being configured inside a transaction): the quant
    analyst says which symbols the provider did not answer for."""
    source = prices(strategy)
    if not isinstance(source, PriceFolders):
        return []
    missing = []
    for symbol in [strategy.benchmark, *symbols]:
        try:
            source.path_for(symbol)
        except DataError:
            missing.append(symbol)
    return missing


def series(strategy: Strategy, symbol: str) -> PriceSeries:
    return prices(strategy).series(symbol)
