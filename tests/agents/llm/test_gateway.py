"""The gateway's rules through the in-process FakeProvider (no HTTP): cache, budget, retries, re-ask."""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from agents.llm.config import Endpoint, LLMSettings, ModelPrice
from agents.llm.errors import (
    BudgetExceeded,
    InvalidOutput,
    ProviderFailure,
    ProviderRefused,
    TransientError,
    TransientFailure,
)
from agents.llm.fakes.inprocess import FakeProvider, approx_tokens
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.types import CallContext, ProviderRequest, ProviderResponse, RenderedPrompt

LOCAL = Endpoint(base_url="http://127.0.0.1:8081/v1", api_key="k", model="local")
CONTEXT = CallContext(run_id="run-1", stage="specialists", role="fundamentals")


class Verdict(BaseModel):
    rating: Literal["buy", "hold", "sell"]
    reason: str = Field(max_length=40)


def prompt(user: str = "Rate AAPL.") -> RenderedPrompt:
    return RenderedPrompt(
        name="verdict",
        version=1,
        content_hash="f" * 64,
        system="Rate.",
        user=user,
        temperature=0.0,
        max_tokens=50,
    )


class Harness:
    def __init__(self, fake: FakeProvider, **settings: object) -> None:
        self.fake = fake
        self.sleeps: list[float] = []
        self.ledger = InMemoryLedger()
        self.settings = LLMSettings.model_validate({"default": LOCAL, "max_retries": 2, **settings})
        self.gateway = LLMGateway(
            self.settings,
            self.ledger,
            ThreadLimiter(2),
            provider_factory=fake.factory,
            sleep=self.sleeps.append,
            rng=random.Random(1),
        )

    def ask(self, user: str = "Rate AAPL.", context: CallContext = CONTEXT) -> Verdict:
        return self.gateway.complete(prompt(user), Verdict, context=context)

    def outcomes(self) -> list[str]:
        return [r.outcome for r in self.ledger.records]


def test_it_returns_the_validated_object_and_records_one_ok_row() -> None:
    h = Harness(FakeProvider([{"rating": "buy", "reason": "margins"}]))
    assert h.ask() == Verdict(rating="buy", reason="margins")
    [row] = h.ledger.records
    assert (row.outcome, row.attempt, row.prompt_name, row.prompt_hash) == ("ok", 1, "verdict", "f" * 64)
    assert (row.run_id, row.stage, row.role, row.model, row.base_url) == (
        "run-1",
        "specialists",
        "fundamentals",
        "local",
        LOCAL.base_url,
    )
    assert row.parsed == {"rating": "buy", "reason": "margins"}
    # The fake counts four characters a token, at least one: "Rate." is 1 and "Rate AAPL." 2.
    answer = json.loads(row.raw_response)["content"]
    assert (row.tokens_in, row.tokens_out, row.cost) == (3, approx_tokens(answer), Decimal(0))


def test_the_request_carries_the_strict_schema_prompt_name_and_role() -> None:
    h = Harness(FakeProvider([{"rating": "buy", "reason": "x"}]))
    h.ask()
    [request] = h.fake.history
    assert (request.prompt_name, request.role, request.schema_name) == ("verdict", "fundamentals", "Verdict")
    assert request.json_schema["additionalProperties"] is False
    assert request.json_schema["required"] == ["rating", "reason"]
    assert [m.role for m in request.messages] == ["system", "user"]


def test_an_identical_request_is_answered_from_the_ledger_without_calling_the_provider() -> None:
    h = Harness(FakeProvider([{"rating": "hold", "reason": "fair"}]))
    first, second = h.ask(), h.ask()
    assert first == second
    assert len(h.fake.history) == 1
    assert h.outcomes() == ["ok", "cached"]
    assert h.ledger.records[1].request_hash == h.ledger.records[0].request_hash
    assert h.ledger.records[1].tokens_in == 0


def test_a_different_prompt_model_or_temperature_is_a_different_cache_key() -> None:
    h = Harness(FakeProvider())
    h.ask("Rate AAPL.")
    h.ask("Rate MSFT.")
    h.gateway.complete(prompt().model_copy(update={"temperature": 0.7}), Verdict, context=CONTEXT)
    assert len(h.fake.history) == 3
    assert len({r.request_hash for r in h.ledger.records}) == 3


def test_the_same_model_name_on_another_endpoint_is_a_different_cache_key() -> None:
    fake = FakeProvider()
    h = Harness(fake)
    h.ask()
    elsewhere = Harness(fake, default=LOCAL.model_copy(update={"base_url": "http://127.0.0.1:9999/v1"}))
    elsewhere.ledger = h.ledger  # one ledger, as in the desk: only the endpoint differs
    elsewhere.gateway.ledger = h.ledger
    elsewhere.ask()
    assert len(fake.history) == 2
    assert h.outcomes() == ["ok", "ok"]
    assert h.ledger.records[0].request_hash != h.ledger.records[1].request_hash


def test_a_cached_answer_the_type_now_rejects_is_asked_again() -> None:
    h = Harness(FakeProvider([{"rating": "buy", "reason": "x"}, {"rating": "buy", "reason": "long enough"}]))
    h.ask()

    class StricterVerdict(Verdict):
        @field_validator("reason")
        @classmethod
        def long_reason(cls, value: str) -> str:
            if len(value) < 5:
                raise ValueError("too short")
            return value

    # Same schema, so same request hash; the stored answer fails the new validator.
    StricterVerdict.__name__ = "Verdict"
    result = h.gateway.complete(prompt(), StricterVerdict, context=CONTEXT)
    assert result.reason == "long enough"
    assert len(h.fake.history) == 2
    assert h.outcomes() == ["ok", "ok"]
    assert h.ledger.records[0].request_hash == h.ledger.records[1].request_hash


def test_an_invalid_answer_gets_one_reask_carrying_the_answer_and_the_error() -> None:
    h = Harness(FakeProvider([{"rating": "strong buy", "reason": "x"}, {"rating": "buy", "reason": "x"}]))
    assert h.ask().rating == "buy"
    assert h.outcomes() == ["invalid", "ok"]
    assert "rating" in h.ledger.records[0].error
    reask = h.fake.history[1].messages
    assert [m.role for m in reask] == ["system", "user", "assistant", "user"]
    assert "strong buy" in reask[2].content
    assert "rating" in reask[3].content and "not valid" in reask[3].content
    # Every row of the call shares the original request hash, so the success is the cache entry.
    assert h.ledger.records[0].request_hash == h.ledger.records[1].request_hash
    h.ask()
    assert h.outcomes()[-1] == "cached"


def test_two_invalid_answers_end_in_invalid_output_with_both_attempts_recorded() -> None:
    h = Harness(FakeProvider(["not json at all", {"rating": "buy"}]))
    with pytest.raises(InvalidOutput, match="failed validation twice") as raised:
        h.ask()
    assert raised.value.raw
    assert h.outcomes() == ["invalid", "invalid"]
    assert h.ledger.cached(h.ledger.records[0].request_hash) is None


CUT = ProviderResponse(content='{"rating": "bu', finish_reason="length", tokens_in=5, tokens_out=50)


def test_a_cut_off_answer_is_asked_again_unchanged_with_twice_the_budget() -> None:
    h = Harness(FakeProvider([CUT, {"rating": "buy", "reason": "x"}]))
    assert h.ask().rating == "buy"
    assert h.outcomes() == ["invalid", "ok"]
    assert h.ledger.records[0].error == "the answer was cut off at max_tokens (50); asked again with 100"
    assert h.ledger.records[0].tokens_out == 50
    first, again = h.fake.history
    assert (first.max_tokens, again.max_tokens) == (50, 100)
    assert again.messages == first.messages  # the same request with room to finish, no "be brief" re-ask


def test_an_answer_that_needed_a_larger_budget_is_still_a_cache_hit_for_the_same_request() -> None:
    h = Harness(FakeProvider([CUT, {"rating": "buy", "reason": "x"}]))
    h.ask()
    # The ok row keeps the hash of the call as asked (max_tokens 50), so the same request costs nothing.
    assert {row.request_hash for row in h.ledger.records} == {h.ledger.records[0].request_hash}
    assert h.ask().rating == "buy"
    assert h.outcomes() == ["invalid", "ok", "cached"]
    assert len(h.fake.history) == 2


def test_an_answer_cut_at_the_larger_budget_gets_one_reask_then_fails() -> None:
    at_100 = CUT.model_copy(update={"tokens_out": 100})  # cut at the larger bound, as a server reports it
    h = Harness(FakeProvider([CUT, at_100, at_100]))
    with pytest.raises(InvalidOutput, match="failed validation twice"):
        h.ask()
    assert h.outcomes() == ["invalid", "invalid", "invalid"]
    budgets = [request.max_tokens for request in h.fake.history]
    assert budgets == [50, 100, 100]
    reask = h.fake.history[2].messages
    assert [m.role for m in reask] == ["system", "user", "assistant", "user"] and "max_tokens" in reask[
        3
    ].content


def test_an_answer_cut_short_of_its_bound_ran_out_of_context_and_fails_at_once() -> None:
    # Seen on the embedded model: a 7,704-token prompt on a slot of 8,192 left room for 488 tokens of a
    # 2,750 bound. Twice the room repeated the same 488 tokens at temperature 0, and the re-ask after it did
    # not fit at all (HTTP 400): three attempts, 250 s, for a failure the first one already told.
    short = ProviderResponse(content='{"rating": "bu', finish_reason="length", tokens_in=5, tokens_out=20)
    h = Harness(FakeProvider([short, {"rating": "buy", "reason": "x"}]))
    with pytest.raises(InvalidOutput, match="context window ran out after 20 tokens of answer"):
        h.ask()
    assert h.outcomes() == ["invalid"] and len(h.fake.history) == 1
    assert "prompt is too long for this model's context" in (h.ledger.records[0].error or "")


def test_a_json_answer_wrapped_in_a_markdown_fence_is_accepted() -> None:
    h = Harness(FakeProvider(['```json\n{"rating": "sell", "reason": "x"}\n```']))
    assert h.ask().rating == "sell"


def test_transient_errors_are_retried_with_backoff_then_succeed() -> None:
    h = Harness(
        FakeProvider(
            [
                TransientError("HTTP 503", kind="server"),
                TransientError("timed out", kind="timeout"),
                {"rating": "buy", "reason": "x"},
            ]
        )
    )
    assert h.ask().rating == "buy"
    assert h.outcomes() == ["error", "timeout", "ok"]
    assert [r.attempt for r in h.ledger.records] == [1, 2, 3]
    # Backoff doubles (0.5 s, then 1 s ceilings) with jitter in the upper half. The harness seeds its rng
    # (Random(1)), so the data decides the sleeps: the same two draws from the same seed, in order.
    same_draws = random.Random(1)
    assert h.sleeps == [same_draws.uniform(0.25, 0.5), same_draws.uniform(0.5, 1.0)]


def test_retry_after_is_honoured_and_capped() -> None:
    h = Harness(
        FakeProvider(
            [
                TransientError("HTTP 429", kind="rate_limit", retry_after_s=7),
                TransientError("HTTP 429", kind="rate_limit", retry_after_s=3600),
                {"rating": "buy", "reason": "x"},
            ]
        )
    )
    h.ask()
    assert h.sleeps == [7, 60.0]


def test_retries_stop_at_max_retries_with_a_recorded_transient_failure() -> None:
    h = Harness(FakeProvider([TransientError("HTTP 500", kind="server")] * 3))
    with pytest.raises(TransientFailure, match="after 3 attempt") as raised:
        h.ask()
    assert raised.value.attempts == 3
    assert raised.value.last_kind == "server"
    assert h.outcomes() == ["error", "error", "error"]
    assert len(h.sleeps) == 2


def test_a_permanent_provider_failure_is_recorded_and_not_retried() -> None:
    h = Harness(
        FakeProvider([ProviderFailure("HTTP 401: bad key", status=401), {"rating": "buy", "reason": "x"}])
    )
    with pytest.raises(ProviderFailure, match="401"):
        h.ask()
    assert h.outcomes() == ["error"]
    assert len(h.fake.history) == 1


# prompt("first") may cost at most ceil(len("Rate." + "first") / 3) + max_tokens = 4 + 50 tokens.
ONE_CALL_AT_MOST = 54


def test_the_budget_stops_the_next_call_with_a_budget_row_and_no_provider_call() -> None:
    h = Harness(FakeProvider(), run_budget_tokens=ONE_CALL_AT_MOST + 6)
    h.ask("first")
    spent = h.ledger.tokens_spent("run-1")
    assert 0 < spent <= ONE_CALL_AT_MOST
    with pytest.raises(BudgetExceeded, match=f"spent {spent} of its {ONE_CALL_AT_MOST + 6} tokens"):
        h.ask("second")  # it could need 54 more, and only 60 - spent are left
    assert h.outcomes() == ["ok", "budget"]
    assert len(h.fake.history) == 1
    # Other runs have their own budget; a call with no run has none.
    h.ask("second", CallContext(run_id="run-2", stage="s", role="macro"))
    h.ask("third", CallContext(run_id=None, stage="s", role="macro"))


def test_the_budget_is_checked_before_the_reask_too() -> None:
    h = Harness(FakeProvider([{"rating": "nope", "reason": "x"}]), run_budget_tokens=ONE_CALL_AT_MOST + 6)
    with pytest.raises(BudgetExceeded):
        h.ask("first")
    assert h.outcomes() == ["invalid", "budget"]


def test_a_cached_answer_is_served_even_after_the_budget_is_spent() -> None:
    h = Harness(FakeProvider(), run_budget_tokens=ONE_CALL_AT_MOST + 6)
    first = h.ask("first")
    assert h.ask("first") == first
    assert h.outcomes() == ["ok", "cached"]


def test_each_attempt_gives_its_reservation_back_as_it_is_recorded() -> None:
    # Room for two calls at their worst: three one after another fit only if each attempt's reservation
    # goes back when its row is written, a failed attempt's included.
    failing = [TransientError("HTTP 503", kind="server"), ProviderFailure("HTTP 400: bad request")]
    h = Harness(FakeProvider(failing), run_budget_tokens=2 * ONE_CALL_AT_MOST + 10)
    with pytest.raises(ProviderFailure):
        h.ask("first")  # a retried 503, then a 400: two attempts, two reservations
    for word in ("second", "third", "fourth"):
        h.ask(word)
    assert h.outcomes() == ["error", "error", "ok", "ok", "ok"]
    assert h.ledger.reserved("run-1") == 0


class SlowProvider:
    """A provider whose calls overlap: each takes 0.2 s, so parallel calls are all in flight together."""

    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake

    def factory(self, endpoint: Endpoint, timeout_s: float) -> SlowProvider:
        return self

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        time.sleep(0.2)
        return self.fake.complete(request)

    def close(self) -> None:
        self.fake.close()


def test_parallel_calls_of_a_run_cannot_together_overrun_its_budget() -> None:
    # Room for two calls at their worst: the other two must be refused while those two are in flight,
    # even though nothing has been spent yet when all four ask.
    budget = 2 * ONE_CALL_AT_MOST + 10
    slow = SlowProvider(FakeProvider())
    h = Harness(slow.fake, run_budget_tokens=budget)
    h.gateway = LLMGateway(h.settings, h.ledger, ThreadLimiter(4), provider_factory=slow.factory)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda word: _outcome(h, word), ["first", "fifth", "sixth", "tenth"]))
    assert sorted(results) == ["budget", "budget", "ok", "ok"]
    assert len(slow.fake.history) == 2 and h.ledger.tokens_spent("run-1") <= budget


def _outcome(h: Harness, word: str) -> str:
    try:
        h.ask(word)
    except BudgetExceeded:
        return "budget"
    return "ok"


def test_loopback_only_refuses_a_hosted_endpoint_before_any_provider_exists() -> None:
    hosted = Endpoint(base_url="https://api.openai.com/v1", api_key="sk-real", model="gpt-4o")
    fake = FakeProvider()
    h = Harness(fake, loopback_only=True, roles={"evaluator": hosted})
    with pytest.raises(ProviderRefused, match=r"https://api\.openai\.com/v1"):
        h.ask(context=CallContext(run_id="r", stage="s", role="evaluator"))
    assert fake.endpoints == [] and fake.history == [] and h.ledger.records == []
    h.ask()  # the loopback default is still fine
    assert fake.endpoints == [LOCAL]


def test_each_role_reaches_its_own_endpoint_and_model() -> None:
    judge = Endpoint(base_url="http://127.0.0.1:9000/v1", api_key="k", model="judge")
    h = Harness(FakeProvider(), roles={"evaluator": judge})
    h.ask(context=CallContext(run_id="r", stage="s", role="evaluator"))
    h.ask(context=CallContext(run_id="r", stage="s", role="macro"))
    assert [r.model for r in h.fake.history] == ["judge", "local"]
    assert [r.base_url for r in h.ledger.records] == [judge.base_url, LOCAL.base_url]


def test_cost_uses_the_price_table_for_the_model() -> None:
    answer = ProviderResponse(
        content='{"rating": "buy", "reason": "x"}', finish_reason="stop", tokens_in=1000, tokens_out=500
    )
    price = ModelPrice(per_1k_in=Decimal("0.0025"), per_1k_out=Decimal("0.01"))
    h = Harness(FakeProvider([answer]), prices={"local": price})
    h.ask()
    assert h.ledger.records[0].cost == Decimal("0.0075")


def test_routes_by_prompt_name_answer_parallel_calls_from_threads() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def answer(request: ProviderRequest) -> dict[str, str]:
        with lock:
            seen.append(request.messages[1].content)
        return {"rating": "hold", "reason": request.messages[1].content[:40]}

    h = Harness(FakeProvider(routes={"verdict": answer}))
    users = [f"Rate ticker {n}." for n in range(24)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(h.ask, users))
    assert [r.reason for r in results] == users
    assert sorted(seen) == sorted(users)
    assert h.outcomes() == ["ok"] * 24


class WatchingProvider:
    """A provider that notes, when each request reaches it, whether the caller had been told it was sent."""

    def __init__(self, fake: FakeProvider, sent: threading.Event) -> None:
        self.fake, self.sent = fake, sent
        self.told_first: list[bool] = []

    def factory(self, endpoint: Endpoint, timeout_s: float) -> WatchingProvider:
        return self

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.told_first.append(self.sent.is_set())
        return self.fake.complete(request)

    def close(self) -> None:
        self.fake.close()


def test_sent_is_set_as_the_request_goes_out_and_when_a_call_ends_without_one() -> None:
    sent = threading.Event()
    watching = WatchingProvider(FakeProvider(), sent)
    h = Harness(watching.fake)
    h.gateway = LLMGateway(h.settings, h.ledger, ThreadLimiter(2), provider_factory=watching.factory)
    h.gateway.complete(prompt("Rate AAPL."), Verdict, context=CONTEXT, sent=sent)
    assert watching.told_first == [True]  # set before the request, not after the answer

    # Answered from the ledger: nothing is sent, and the caller is not left waiting.
    again = threading.Event()
    h.gateway.complete(prompt("Rate AAPL."), Verdict, context=CONTEXT, sent=again)
    assert again.is_set() and watching.told_first == [True]

    # Refused before any request (a hosted endpoint while loopback only): set all the same.
    hosted = Endpoint(base_url="https://api.openai.com/v1", api_key="sk-real", model="gpt-4o")
    refused = Harness(FakeProvider(), loopback_only=True, roles={"evaluator": hosted})
    never = threading.Event()
    with pytest.raises(ProviderRefused):
        refused.gateway.complete(
            prompt("Rate AAPL."),
            Verdict,
            context=CallContext(run_id="r", stage="s", role="evaluator"),
            sent=never,
        )
    assert never.is_set()
