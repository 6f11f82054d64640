"""Speed of parsing the real inline XBRL 10-Qs into facts, one row per document.

The default suite once asserted each document parsed in under a second; a wall-clock limit there fails on a
busy machine and says nothing about behaviour, so the figure lives here and is printed, never asserted.
(The largest companyfacts payload has its own row in test_foundation_bench.py.)
"""

from __future__ import annotations

import statistics
import time

import pytest

from agents.data.edgar import facts_from_inline_xbrl
from tests.agents.data import shared_file
from tests.agents.data.test_edgar_inline_xbrl import FILINGS
from tests.bench.conftest import BenchReport

pytestmark = pytest.mark.bench

REPEATS = 5


@pytest.mark.parametrize(("ticker", "relative"), sorted(FILINGS.items()))
def test_bench_inline_xbrl_document_to_facts(bench_report: BenchReport, ticker: str, relative: str) -> None:
    raw = shared_file(relative).read_bytes()
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        fact_set = facts_from_inline_xbrl(raw, ticker=ticker)
        timings.append(time.perf_counter() - started)
    bench_report.add(
        f"inline XBRL {relative.rsplit('/', 1)[-1]} ({len(raw) // 1024} KB gz) -> facts",
        facts=len(fact_set.facts),
        median_ms=round(statistics.median(timings) * 1000, 1),
        slowest_ms=round(max(timings) * 1000, 1),
    )
