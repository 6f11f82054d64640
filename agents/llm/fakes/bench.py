"""Gateway overhead per call, measured against the fake server at zero latency (for tests/bench).

The same distinct requests go once straight through the provider (HTTP + the openai client) and once through
the gateway (hashing, ledger, limiter, validation on top); the difference per call is the gateway's cost.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.prompts import PromptTemplate, load_prompt
from agents.llm.providers.openai_compat import OpenAICompatProvider
from agents.llm.schema import schema_name, strict_json_schema
from agents.llm.types import CallContext, Message, ProviderRequest, RenderedPrompt

WARM_UP_CALLS = 20


class BenchAnswer(BaseModel):
    verdict: str = Field(max_length=60)
    score: int = Field(ge=0, le=10)
    reasons: list[str] = Field(min_length=1, max_length=3)


@dataclass(frozen=True)
class OverheadReport:
    calls: int
    direct_ms_per_call: float  # provider only: HTTP round trip and the openai client
    gateway_ms_per_call: float  # the same requests through LLMGateway.complete
    cached_ms_per_call: float  # repeated requests answered from the ledger, no HTTP

    @property
    def overhead_ms_per_call(self) -> float:
        return self.gateway_ms_per_call - self.direct_ms_per_call


# In prompts/fakes/: kept with the prompts, but not loaded with the app's at start-up (it imports the fakes).
BENCH_PROMPT = Path(__file__).resolve().parents[3] / "prompts" / "fakes" / "llm_bench.md"


@functools.cache
def _template() -> PromptTemplate:
    return load_prompt(BENCH_PROMPT)


def _prompt(index: int) -> RenderedPrompt:
    return _template().render({"index": str(index)})


def measure_gateway_overhead(calls: int = 200) -> OverheadReport:
    with FakeLLMServer(latency_ms=0) as server:
        endpoint = Endpoint(base_url=server.url, api_key="bench-key", model="bench-model")
        settings = LLMSettings(default=endpoint, timeout_s=10, max_retries=0, loopback_only=True)
        provider = OpenAICompatProvider(endpoint, timeout_s=settings.timeout_s)
        # The gateway shares the direct path's client, so both measure the same warm connection.
        gateway = LLMGateway(
            settings, InMemoryLedger(), ThreadLimiter(1), provider_factory=lambda e, t: provider
        )
        context = CallContext(run_id="bench", stage="bench", role="evaluator")
        schema = strict_json_schema(BenchAnswer)

        def direct(index: int) -> None:
            prompt = _prompt(index)
            provider.complete(
                ProviderRequest(
                    model=endpoint.model,
                    messages=(
                        Message(role="system", content=prompt.system),
                        Message(role="user", content=prompt.user),
                    ),
                    schema_name=schema_name(BenchAnswer),
                    json_schema=schema,
                    temperature=prompt.temperature,
                    max_tokens=prompt.max_tokens,
                    prompt_name=prompt.name,
                    role=context.role,
                )
            )

        for index in range(WARM_UP_CALLS):
            direct(-1 - index)
        started = time.perf_counter()
        for index in range(calls):
            direct(index)
        direct_s = time.perf_counter() - started

        started = time.perf_counter()
        for index in range(calls):
            gateway.complete(_prompt(calls + index), BenchAnswer, context=context)
        gateway_s = time.perf_counter() - started

        started = time.perf_counter()
        for index in range(calls):
            gateway.complete(_prompt(calls + index), BenchAnswer, context=context)
        cached_s = time.perf_counter() - started
        gateway.close()  # closes the shared client too

    per_call = 1000 / calls
    return OverheadReport(
        calls=calls,
        direct_ms_per_call=direct_s * per_call,
        gateway_ms_per_call=gateway_s * per_call,
        cached_ms_per_call=cached_s * per_call,
    )
