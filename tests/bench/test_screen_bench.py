"""The screen's quant analyst, code only (seed 002: "under a second for 100 symbols"): the bundled stocknet
universe (88 stocks, 87 with prices at the demo's as-of date) read from its files and profiled, printed,
never asserted. Memory is the peak Python allocation while it runs (tracemalloc)."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from datetime import date
from pathlib import Path

import pytest

from agents.data.prices import PriceFolders
from agents.data.universe import StocknetUniverse
from agents.screen.config import Thresholds
from agents.screen.quant import screen_quant
from agents.screen.sectors import sector_of
from tests.bench.conftest import BenchReport
from tests.conftest import ROOT

pytestmark = pytest.mark.bench

SNAPSHOT = ROOT / "data" / "snapshot"
REPEATS = 5


def _screen(root: Path) -> int:
    prices = PriceFolders([root / "prices" / "daily", root / "stocknet" / "price"])
    listings = StocknetUniverse(root / "stocknet").listings()
    items = [
        (sector_of(row.symbol, table={row.symbol: row.sector}), row.name, prices.series(row.symbol))
        for row in listings
    ]
    quant = screen_quant(
        items,
        benchmark=prices.series("SPY"),
        volatility=prices.series("VIX"),
        as_of=date(2015, 8, 21),
        thresholds=Thresholds(),
    )
    return len(quant.symbols)


def test_bench_screen_quant_over_the_stocknet_universe(bench_report: BenchReport) -> None:
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        profiled = _screen(SNAPSHOT)
        timings.append(time.perf_counter() - started)
    tracemalloc.start()
    _screen(SNAPSHOT)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    bench_report.add(
        "screen quant: 88 stocknet files read and profiled (code only)",
        symbols=profiled,
        median_s=round(statistics.median(timings), 3),
        slowest_s=round(max(timings), 3),
        peak_mib=round(peak / 2**20, 1),
    )
