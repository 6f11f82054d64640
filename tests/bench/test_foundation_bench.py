"""Speed and memory of the foundation's hot paths, on the real data.

- parsing the largest companyfacts payload into cited facts (seconds, peak Python memory);
- the LLM gateway's own cost per call over HTTP, and per cache hit;
- independent calls fanned out under the concurrency bound against a slow endpoint (wall time vs serial).
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import pytest

from agents.data.edgar import facts_from_companyfacts, read_companyfacts_file
from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.bench import measure_gateway_overhead
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.prompts import load_prompt
from agents.llm.types import CallContext
from tests.agents.data import SHARED_DATA
from tests.bench.conftest import BenchReport
from tests.conftest import ROOT

pytestmark = pytest.mark.bench

LARGEST_COMPANYFACTS = SHARED_DATA / "edgar" / "companyfacts" / "CIK0001045810_NVDA.json.gz"


def test_bench_companyfacts_to_facts(bench_report: BenchReport) -> None:
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        fact_set = facts_from_companyfacts(read_companyfacts_file(LARGEST_COMPANYFACTS), ticker="NVDA")
        timings.append(time.perf_counter() - started)
    tracemalloc.start()
    facts_from_companyfacts(read_companyfacts_file(LARGEST_COMPANYFACTS), ticker="NVDA")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    bench_report.add(
        "companyfacts NVDA (271 KB gz, 26,903 rows) -> facts",
        facts=len(fact_set.facts),
        median_ms=round(statistics.median(timings) * 1000, 1),
        peak_mib=round(peak / 2**20, 1),
    )


def test_bench_gateway_overhead(bench_report: BenchReport) -> None:
    report = measure_gateway_overhead(calls=200)
    bench_report.add(
        "LLM gateway overhead over HTTP (fake server, 200 calls)",
        direct_ms=round(report.direct_ms_per_call, 3),
        gateway_ms=round(report.gateway_ms_per_call, 3),
        overhead_ms=round(report.overhead_ms_per_call, 3),
        cache_hit_ms=round(report.cached_ms_per_call, 3),
    )


@pytest.mark.parametrize("concurrency", [1, 3, 6])
def test_bench_fan_out_under_the_concurrency_bound(bench_report: BenchReport, concurrency: int) -> None:
    calls, latency_ms = 12, 250
    template = load_prompt(ROOT / "prompts" / "llm_ping.md")
    with FakeLLMServer(latency_ms=latency_ms) as server:
        endpoint = Endpoint(base_url=server.url, api_key="bench-key", model="bench-model")
        settings = LLMSettings(
            default=endpoint, max_retries=0, loopback_only=True, max_concurrency=concurrency
        )
        with LLMGateway(settings, InMemoryLedger(), ThreadLimiter(concurrency)) as gateway:

            def one(index: int) -> None:
                prompt = template.render({"role": f"fan-out {index}"})
                gateway.complete(
                    prompt, template.output_type, context=CallContext(stage="bench", role="analyst")
                )

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=calls) as pool:
                list(pool.map(one, range(calls)))
            wall = time.perf_counter() - started
        in_flight = server.max_in_flight
    bench_report.add(
        f"fan-out of {calls} calls at {latency_ms} ms each, bound {concurrency}",
        wall_s=round(wall, 2),
        serial_s=round(calls * latency_ms / 1000, 2),
        max_in_flight=in_flight,
    )
