"""The gateway over real HTTP: the openai client against the fake OpenAI-compatible server, fault by fault."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agents.llm.config import Endpoint, LLMSettings, load_llm_settings
from agents.llm.errors import (
    BudgetExceeded,
    InvalidOutput,
    ProviderFailure,
    ProviderRefused,
    TransientFailure,
)
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.gateway import LLMGateway, ProviderFactory
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.loops import looped
from agents.llm.providers.openai_compat import openai_provider_factory
from agents.llm.types import CallContext, Provider, RenderedPrompt


class Move(BaseModel):
    risk: Literal["low", "medium", "high"]
    title: str = Field(min_length=3, max_length=60)
    score: int = Field(ge=0, le=120)


CONTEXT = CallContext(run_id="run-7", stage="moves", role="synthesizer")


def prompt(user: str = "Propose one strategic move for AAPL.") -> RenderedPrompt:
    return RenderedPrompt(
        name="moves",
        version=3,
        content_hash="a" * 64,
        system="You plan.",
        user=user,
        temperature=0.3,
        max_tokens=200,
    )


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@pytest.fixture
def desk_for() -> Iterator[Callable[..., Desk]]:
    """Builds desks and closes their HTTP connections at teardown."""
    desks: list[Desk] = []

    def build(
        settings: LLMSettings, limit: int = 4, factory: ProviderFactory = openai_provider_factory
    ) -> Desk:
        desks.append(Desk(settings, limit, factory))
        return desks[-1]

    yield build
    for desk in desks:
        desk.gateway.close()


class Desk:
    """A gateway wired to the fake server, recording its backoff sleeps instead of sleeping."""

    def __init__(
        self, settings: LLMSettings, limit: int = 4, factory: ProviderFactory = openai_provider_factory
    ):
        self.sleeps: list[float] = []
        self.ledger = InMemoryLedger()
        self.gateway = LLMGateway(
            settings, self.ledger, ThreadLimiter(limit), provider_factory=factory, sleep=self.sleeps.append
        )

    def ask(self, user: str = "Propose one strategic move for AAPL.", context: CallContext = CONTEXT) -> Move:
        return self.gateway.complete(prompt(user), Move, context=context)

    def outcomes(self) -> list[str]:
        return [r.outcome for r in self.ledger.records]


def settings_for(server: FakeLLMServer, **overrides: object) -> LLMSettings:
    endpoint = Endpoint(base_url=server.url, api_key="test-key", model="fake-model")
    values: dict[str, object] = {
        "default": endpoint,
        "timeout_s": 1.0,
        "max_retries": 3,
        "loopback_only": True,
    }
    return LLMSettings.model_validate(values | overrides)


def test_a_structured_answer_comes_back_validated_and_recorded(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    desk = desk_for(settings_for(server))
    move = desk.ask()
    assert isinstance(move, Move)
    [row] = desk.ledger.records
    assert row.outcome == "ok"
    assert row.parsed == move.model_dump()
    usage = json.loads(row.raw_response)["usage"]  # what the server reported is what the ledger counts
    assert (row.tokens_in, row.tokens_out) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert row.tokens_in > 0 and row.tokens_out > 0
    assert '"chat.completion"' in row.raw_response
    [request] = server.requests
    assert (request["role"], request["prompt_name"], request["model"]) == (
        "synthesizer",
        "moves",
        "fake-model",
    )
    response_format = request["body"]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["schema"]["properties"]["risk"]["enum"] == ["low", "medium", "high"]
    assert (request["body"]["temperature"], request["body"]["max_tokens"]) == (0.3, 200)


def test_a_500_is_retried_and_the_client_itself_never_retries(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("500")
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["error", "ok"]
    assert server.request_count == 2
    assert "HTTP 500" in desk.ledger.records[0].error

    server.reset()
    server.inject("500")
    no_retries = desk_for(settings_for(server, max_retries=0))
    with pytest.raises(TransientFailure):
        no_retries.ask("another request")
    # The openai client would try a 500 three times on its own; built with max_retries=0 it sends one.
    assert server.request_count == 1


def test_a_429_waits_for_retry_after_then_succeeds(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject({"kind": "429", "retry_after": 2})
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.sleeps == [2.0]
    assert desk.outcomes() == ["error", "ok"]


def test_a_hang_times_out_then_the_retry_succeeds(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject({"kind": "hang", "seconds": 3})
    desk = desk_for(settings_for(server))
    started = time.monotonic()
    desk.ask()
    assert time.monotonic() - started < 2.5
    assert desk.outcomes() == ["timeout", "ok"]
    assert desk.ledger.records[0].duration_ms >= 1000


def test_when_every_attempt_hangs_the_call_fails_with_recorded_timeouts(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject({"kind": "hang", "seconds": 3}, {"kind": "hang", "seconds": 3})
    desk = desk_for(settings_for(server, max_retries=1))
    with pytest.raises(TransientFailure) as raised:
        desk.ask()
    assert raised.value.last_kind == "timeout"
    assert desk.outcomes() == ["timeout", "timeout"]


def test_a_truncated_body_is_retried(server: FakeLLMServer, desk_for: Callable[..., Desk]) -> None:
    server.inject("truncated")
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["error", "ok"]
    assert "not complete JSON" in desk.ledger.records[0].error
    assert desk.ledger.records[0].raw_response.startswith('{"id"')


def test_a_dropped_connection_is_retried(server: FakeLLMServer, desk_for: Callable[..., Desk]) -> None:
    server.inject("disconnect")
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["error", "ok"]


def test_a_schema_invalid_answer_is_reasked_with_the_error_and_then_succeeds(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("invalid_schema")
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["invalid", "ok"]
    reask = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert "Input should be an object" in reask[3]["content"]


@pytest.mark.parametrize("fault", ["not_json", "length"])
def test_prose_or_a_cut_off_answer_is_reasked(
    server: FakeLLMServer, fault: str, desk_for: Callable[..., Desk]
) -> None:
    server.inject(fault)
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["invalid", "ok"]


def test_a_cut_off_answer_is_asked_again_with_twice_the_budget_and_then_cached(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("length")
    desk = desk_for(settings_for(server))
    first = desk.ask()
    budgets = [entry["body"]["max_tokens"] for entry in server.requests]
    assert budgets == [prompt("").max_tokens, 2 * prompt("").max_tokens]
    assert server.requests[0]["body"]["messages"] == server.requests[1]["body"]["messages"]
    assert desk.ask() == first and server.request_count == 2  # the same request again: no HTTP call
    assert desk.outcomes() == ["invalid", "ok", "cached"]


def test_an_answer_the_servers_context_cut_is_not_asked_again(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("context")
    desk = desk_for(settings_for(server))
    with pytest.raises(InvalidOutput, match="context window ran out"):
        desk.ask()
    assert server.request_count == 1 and desk.outcomes() == ["invalid"]


def test_a_schema_invalid_answer_twice_is_a_recorded_invalid_output(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("invalid_schema", "invalid_schema")
    desk = desk_for(settings_for(server))
    with pytest.raises(InvalidOutput):
        desk.ask()
    assert desk.outcomes() == ["invalid", "invalid"]
    assert server.request_count == 2


def test_a_400_is_a_permanent_failure_sent_once(server: FakeLLMServer, desk_for: Callable[..., Desk]) -> None:
    server.inject("400")
    desk = desk_for(settings_for(server))
    with pytest.raises(ProviderFailure, match="HTTP 400"):
        desk.ask()
    assert server.request_count == 1
    assert desk.outcomes() == ["error"]


def test_a_repeated_identical_request_makes_no_http_call(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    desk = desk_for(settings_for(server))
    first = desk.ask()
    assert server.request_count == 1
    assert desk.ask() == first
    assert server.request_count == 1
    assert desk.outcomes() == ["ok", "cached"]


# The gateway reserves a call's worst case before sending it: prompt("first") may cost at most
# ceil(len("You plan." + "first") / 3) + max_tokens = 5 + 200 tokens.
ONE_CALL_AT_MOST = 205


def test_the_budget_stops_a_call_before_it_is_sent(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    desk = desk_for(settings_for(server, run_budget_tokens=ONE_CALL_AT_MOST + 6))
    desk.ask("first")
    spent = desk.ledger.tokens_spent("run-7")
    with pytest.raises(BudgetExceeded, match=f"spent {spent} of its {ONE_CALL_AT_MOST + 6} tokens"):
        desk.ask("second")  # it could need 205 more, and only 211 - spent are left
    assert server.request_count == 1
    assert desk.outcomes() == ["ok", "budget"]


def test_loopback_only_refuses_the_hosted_api_without_touching_the_network(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    built: list[Endpoint] = []

    def factory(endpoint: Endpoint, timeout_s: float) -> Provider:
        built.append(endpoint)
        return openai_provider_factory(endpoint, timeout_s)

    hosted = Endpoint(base_url="https://api.openai.com/v1", api_key="sk-not-real", model="gpt-4o")
    desk = desk_for(settings_for(server, default=hosted), factory=factory)
    with pytest.raises(ProviderRefused, match="LLM_LOOPBACK_ONLY"):
        desk.ask()
    assert built == [] and desk.ledger.records == []


def test_a_role_model_override_reaches_the_server_as_that_model(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    settings = load_llm_settings(
        {
            "LLM_BASE_URL": server.url,
            "LLM_API_KEY": "test-key",
            "LLM_MODEL": "desk-model",
            "LLM_MODEL_EVALUATOR": "judge-model",
            "LLM_LOOPBACK_ONLY": "true",
            "LLM_TIMEOUT_S": "2",
        }
    )
    desk = desk_for(settings)
    desk.ask(context=CallContext(run_id="r", stage="evaluate", role="evaluator"))
    desk.ask(context=CallContext(run_id="r", stage="specialists", role="macro"))
    assert [(r["role"], r["model"]) for r in server.requests] == [
        ("evaluator", "judge-model"),
        ("macro", "desk-model"),
    ]


def test_scripted_answers_per_role_come_first_then_generated_ones(desk_for: Callable[..., Desk]) -> None:
    scripted = {"risk": "high", "title": "Acquire a modem maker", "score": 97}
    with FakeLLMServer(script={"synthesizer": [scripted]}) as server:
        desk = desk_for(settings_for(server))
        assert desk.ask("one").model_dump() == scripted
        assert desk.ask("two").model_dump() != scripted


def test_parallel_calls_are_capped_by_the_limiter(desk_for: Callable[..., Desk]) -> None:
    with FakeLLMServer(latency_ms=150) as server:
        desk = desk_for(settings_for(server), limit=2)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=8) as pool:
            moves = list(pool.map(desk.ask, [f"Move number {n}" for n in range(8)]))
        elapsed = time.monotonic() - started
        assert len(moves) == 8
        assert server.max_in_flight == 2
        assert elapsed >= 4 * 0.15  # eight calls, two at a time
        assert desk.outcomes() == ["ok"] * 8


def raw_answer(content: str) -> dict[str, object]:
    """A raw-fault reply: a 200 chat completion whose body is written byte for byte as given here."""
    body = (
        '{"id": "x", "object": "chat.completion", "model": "fake-model", "choices": [{"index": 0, '
        f'"message": {{"role": "assistant", "content": "{content}"}}, "finish_reason": "stop"}}]}}'
    )
    return {"kind": "raw", "body_b64": base64.b64encode(body.encode()).decode()}


def test_an_answer_with_a_lone_surrogate_is_reasked_and_the_reask_can_still_be_sent(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject(raw_answer("\\ud800 not an object"))
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["invalid", "ok"]
    assert server.requests[1]["body"]["messages"][2]["content"] == "\ufffd not an object"


def test_an_answer_with_a_nul_character_is_reasked(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject(raw_answer('{\\"risk\\": \\"low\\", \\"title\\": \\"Buy\\\\u0000back\\", \\"score\\": 4}'))
    desk = desk_for(settings_for(server))
    move = desk.ask()
    assert "\x00" not in move.title
    assert desk.outcomes() == ["invalid", "ok"]
    assert "NUL" in desk.ledger.records[0].error


def test_an_html_page_sent_as_a_200_is_a_recorded_transient_error_and_retried(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    server.inject({"kind": "raw", "body_b64": base64.b64encode(page).decode(), "content_type": "text/html"})
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["error", "ok"]
    assert "not JSON" in desk.ledger.records[0].error
    assert desk.ledger.records[0].raw_response == page.decode()


def test_an_answer_that_loops_until_it_is_cut_is_told_so_not_given_twice_the_room(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    # The 1.5B listed fact ids for 2,400 tokens (12 minutes); with twice the room it would list them for 24.
    server.inject("looping")
    desk = desk_for(settings_for(server))
    desk.ask()
    assert desk.outcomes() == ["invalid", "ok"]
    budgets = [entry["body"]["max_tokens"] for entry in server.requests]
    assert budgets == [prompt("").max_tokens, prompt("").max_tokens]
    reask = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert "repeated itself" in reask[3]["content"] and "repeated itself" in desk.ledger.records[0].error
    # Not shown its 60 repeats again (the 1.5B, shown them, wrote them again): the block once.
    assert reask[2]["content"].count("[[XOM:return_1w:2017-09-01]]") == 1


def test_a_looping_answer_cut_again_after_being_told_fails_without_a_third_call(
    server: FakeLLMServer, desk_for: Callable[..., Desk]
) -> None:
    server.inject("looping", "looping")
    desk = desk_for(settings_for(server))
    with pytest.raises(InvalidOutput):
        desk.ask()
    assert server.request_count == 2 and desk.outcomes() == ["invalid", "invalid"]


def test_only_a_repeating_tail_counts_as_a_loop() -> None:
    prose = " ".join(
        f"Sentence {i} says something new about margin {i * 7} and cash {i * 13}." for i in range(60)
    )
    assert not looped(prose) and not looped("[[A:x]] " * 50)  # too short to tell
    assert looped('{"synthesis": "' + "[[XOM:return_1w:2017-09-01]], [[CVX:return_1w:2017-09-01]] " * 40)
    # A lone surrogate (a "\ud800" escape in the answer's JSON) is read, not a crash.
    assert looped("\ud800 again " * 200) and not looped(prose + "\udfff")
