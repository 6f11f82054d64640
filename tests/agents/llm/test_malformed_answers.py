"""Release gate: malformed answers. At least 1,000 generated reply bodies (truncated, wrong types, huge,
empty, invalid UTF-8, ...) go through the real gateway and openai client over HTTP, and the gateway only ever
returns a valid answer or raises its own error types, with every attempt in the ledger.

One fake server and one gateway serve the whole sweep (the client keeps its connection alive); each body is
queued twice as a ``raw`` fault, so that an answer failing validation meets the same body on its re-ask.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.errors import InvalidOutput, LLMError, ProviderFailure, TransientFailure
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.types import CallContext, LLMCallRecord, RenderedPrompt
from tests.agents.llm.malformed_bodies import Reply, malformed_replies

GATE_MINIMUM = 1_000
# What a call over malformed answers may end in, besides a valid answer.
OUTCOME_ERRORS = (TransientFailure, ProviderFailure, InvalidOutput)
CONTEXT = CallContext(run_id="run-malformed", stage="moves", role="synthesizer")
# The PostgreSQL ledger's columns (memos LLMCall): a 32-bit token count, a cost of 12 digits with 6 decimals.
MAX_COLUMN_INT = 2**31 - 1
MAX_COST = Decimal("999999.999999")


class Move(BaseModel):
    risk: Literal["low", "medium", "high"]
    title: str = Field(min_length=3, max_length=60)
    score: int = Field(ge=0, le=120)


@dataclass
class Sweep:
    tried: int = 0
    answered: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    families: set[str] = field(default_factory=set)
    escaped: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    unstorable: list[str] = field(default_factory=list)
    seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")

    @property
    def passed(self) -> int:
        return self.answered + sum(self.errors.values())

    def summary(self) -> str:
        errors = ", ".join(f"{count} {name}" for name, count in sorted(self.errors.items()))
        return (
            f"malformed answers: {self.tried} bodies tried in {len(self.families)} families, {self.passed} "
            f"passed ({self.answered} valid answers; {errors}), {len(self.escaped)} escaped, "
            f"in {self.seconds:.1f} s (slowest {self.slowest[0]:.2f} s: {self.slowest[1][:60]})"
        )


def prompt(index: int) -> RenderedPrompt:
    # A different user text per body: a valid answer must not be served from the cache to the next one.
    return RenderedPrompt(
        name="moves",
        version=1,
        content_hash="c" * 64,
        system="You plan.",
        user=f"Propose one strategic move, case {index}.",
        temperature=0.0,
        max_tokens=200,
    )


def unstorable(row: LLMCallRecord) -> list[str]:
    """Why the PostgreSQL ledger would refuse the row: NUL or a lone surrogate in a text, too big a number."""
    problems = []
    texts = {"raw_response": row.raw_response, "error": row.error, "parsed": str(row.parsed)}
    for name, text in texts.items():
        if "\x00" in text:
            problems.append(f"NUL in {name}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"a lone surrogate in {name}")
    if not (0 <= row.tokens_in <= MAX_COLUMN_INT and 0 <= row.tokens_out <= MAX_COLUMN_INT):
        problems.append(f"tokens {row.tokens_in}/{row.tokens_out}")
    if not 0 <= row.cost <= MAX_COST:
        problems.append(f"cost {row.cost}")
    return problems


def ask(gateway: LLMGateway, index: int) -> tuple[Move | None, BaseException | None]:
    try:
        return gateway.complete(prompt(index), Move, context=CONTEXT), None
    except BaseException as exc:  # the gate: nothing but LLMError comes out
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, exc


def check_rows(
    rows: list[LLMCallRecord], requests: int, result: Move | None, error: BaseException | None
) -> str:
    """Empty when there is one row per HTTP request, in order, ending as the call ended."""
    outcomes = [row.outcome for row in rows]
    if len(rows) != requests or [row.attempt for row in rows] != list(range(1, requests + 1)):
        return f"{requests} request(s) but rows {outcomes}"
    if result is not None:
        ends = {"ok"}
    else:
        ends = {"invalid"} if isinstance(error, InvalidOutput) else {"error", "timeout"}
    if not outcomes or outcomes[-1] not in ends:
        return f"ended with {type(error).__name__ if error else 'an answer'} but rows {outcomes}"
    return ""


def run_one(
    sweep: Sweep, gateway: LLMGateway, ledger: InMemoryLedger, server: FakeLLMServer, index: int, reply: Reply
) -> None:
    sweep.tried += 1
    sweep.families.add(reply.family)
    server.reset()
    server.inject(reply.fault(), reply.fault())
    before = len(ledger.records)
    started = time.monotonic()
    result, error = ask(gateway, index)
    sweep.slowest = max(sweep.slowest, (time.monotonic() - started, reply.describe()))
    if error is None:
        if isinstance(result, Move) and Move.model_validate(result.model_dump()) == result:
            sweep.answered += 1
        else:
            sweep.escaped.append(f"{reply.describe()}: returned {result!r}")
    elif isinstance(error, OUTCOME_ERRORS):
        sweep.errors[type(error).__name__] += 1
    else:
        kind = "an LLMError of the wrong kind" if isinstance(error, LLMError) else "escaped"
        sweep.escaped.append(
            f"{reply.describe()}: {kind} {type(error).__module__}.{type(error).__name__}: {error}"
        )
    rows = ledger.records[before:]
    if problem := check_rows(rows, server.request_count, result, error):
        sweep.unrecorded.append(f"{reply.describe()}: {problem}")
    sweep.unstorable += [f"{reply.describe()}: {p}" for row in rows for p in unstorable(row)]


@pytest.fixture(scope="module")
def replies() -> list[Reply]:
    return malformed_replies()


@pytest.fixture(scope="module")
def sweep(replies: list[Reply]) -> Sweep:
    sweep = Sweep()
    with FakeLLMServer() as server:
        endpoint = Endpoint(base_url=server.url, api_key="test-key", model="fake-model")
        settings = LLMSettings(default=endpoint, timeout_s=5.0, max_retries=0, loopback_only=True)
        ledger = InMemoryLedger()
        started = time.monotonic()
        with LLMGateway(settings, ledger, ThreadLimiter(1)) as gateway:
            for index, reply in enumerate(replies):
                run_one(sweep, gateway, ledger, server, index, reply)
        sweep.seconds = time.monotonic() - started
    print(f"\n{sweep.summary()}")
    return sweep


def test_at_least_a_thousand_distinct_bodies_are_generated_the_same_on_every_run(
    replies: list[Reply],
) -> None:
    assert len(replies) >= GATE_MINIMUM
    assert len({(r.status, r.content_type, r.headers, r.body) for r in replies}) == len(replies)
    assert malformed_replies() == replies
    families = {reply.family for reply in replies}
    for expected in [
        "empty or whitespace",
        "truncated JSON",
        "invalid UTF-8 inside strings",
        "invalid UTF-8 outside strings",
        "wrong top-level type",
        "content of the wrong schema",
        "content that is not JSON",
        "Markdown fence around invalid JSON",
        "huge",
        "deeply nested",
        "NaN and Infinity",
        "duplicate keys",
        "byte order mark",
        "wrong content type",
        "HTML error page with 200",
        "HTTP 3xx with an odd body",
        "random mutation",
    ]:
        assert expected in families
    assert max(len(reply.body) for reply in replies) >= 4 * 1024 * 1024


def test_every_malformed_body_ends_in_a_valid_answer_or_one_of_the_gateways_own_errors(
    sweep: Sweep, replies: list[Reply]
) -> None:
    assert sweep.tried == len(replies) >= GATE_MINIMUM
    assert sweep.escaped == [], f"{sweep.summary()}\n" + "\n".join(sweep.escaped[:20])
    assert sweep.passed == sweep.tried, sweep.summary()
    # Each way out is taken many times: the bodies are not all failing (or all passing) the same way.
    assert sweep.answered > 100
    assert all(sweep.errors[error.__name__] > 100 for error in OUTCOME_ERRORS), sweep.summary()


def test_every_attempt_at_every_malformed_body_is_a_ledger_row(sweep: Sweep) -> None:
    assert sweep.unrecorded == [], "\n".join(sweep.unrecorded[:20])


def test_every_ledger_row_would_fit_the_postgresql_ledger(sweep: Sweep) -> None:
    assert sweep.unstorable == [], "\n".join(sweep.unstorable[:20])
