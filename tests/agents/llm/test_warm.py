"""Warming a model server's prompt cache: the system texts go to servers on this machine only, one token
asked of each, and a failure is said without stopping the rest."""

from __future__ import annotations

from pydantic import BaseModel

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.types import CallContext, RenderedPrompt
from agents.llm.warm import WARM_QUESTION, WarmPrompt, shared_start, warm

HOSTED = Endpoint(base_url="https://api.example.com/v1", api_key="k", model="gpt-hosted")


def settings_for(url: str, *, hosted_roles: tuple[str, ...] = ()) -> LLMSettings:
    return LLMSettings(
        default=Endpoint(base_url=url, api_key="k", model="local-model"),
        roles=dict.fromkeys(hosted_roles, HOSTED),
        max_concurrency=2,
        max_retries=0,
        loopback_only=False,
    )


PROMPTS = [
    WarmPrompt(role="fundamentals", name="specialist_fundamentals", system="You are a fundamentals analyst."),
    WarmPrompt(role="evaluator", name="evaluator", system="You are the risk calibrator."),
    WarmPrompt(role="synthesizer", name="synthesizer", system="You are the lead PM."),
]


def test_each_system_text_is_sent_once_to_a_loopback_server_asking_one_token() -> None:
    with FakeLLMServer() as server:
        warmed = list(warm(settings_for(server.url, hosted_roles=("evaluator",)), PROMPTS))
        sent = server.requests
    assert [w.prompt.name for w in warmed] == ["specialist_fundamentals", "evaluator", "synthesizer"]
    assert [w.endpoint is not None for w in warmed] == [True, False, True]  # the hosted evaluator: never
    assert all(not w.error for w in warmed)
    assert [entry["prompt_name"] for entry in sent] == ["warm:specialist_fundamentals", "warm:synthesizer"]
    for entry, prompt in zip(sent, (PROMPTS[0], PROMPTS[2]), strict=True):
        body = entry["body"]
        assert body["messages"] == [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": WARM_QUESTION},
        ]
        assert body["max_tokens"] == 1
        assert body["model"] == "local-model"


def test_a_server_that_fails_is_said_and_the_next_prompt_still_tried() -> None:
    with FakeLLMServer() as server:
        server.inject("500", prompt="warm:specialist_fundamentals")
        warmed = list(warm(settings_for(server.url), PROMPTS))
    assert "500" in warmed[0].error
    assert [bool(w.error) for w in warmed[1:]] == [False, False]


FIGURES = "".join(f"- AAPL:metric_{n}:FY2025: a figure the desk renders\n" for n in range(80))


def reask(section: str, sentence: str) -> RenderedPrompt:
    return RenderedPrompt(
        name="reask",
        version=2,
        content_hash="b" * 64,
        system="You wrote a memo. Rewrite each withheld sentence without typing a number.",
        user=f"{FIGURES}\nThe withheld sentences of {section!r}:\n1. {sentence}",
        temperature=0,
        max_tokens=300,
    )


ASKS = [reask("thesis", "Revenue grew 12%."), reask("risk budget", "The margin is 46%.")]


def test_the_shared_start_of_prompts_that_begin_alike_is_their_system_and_common_lines() -> None:
    assert shared_start(ASKS) == ASKS[0].system + FIGURES + "\n"
    assert shared_start(ASKS[:1]) is None  # nothing to share with
    other = ASKS[1].model_copy(update={"system": "You wrote a deck."})
    assert shared_start([ASKS[0], other]) is None
    short = [p.model_copy(update={"user": p.user.removeprefix(FIGURES)}) for p in ASKS]
    assert shared_start(short) is None  # too little in common to be worth waiting for


class Rewrite(BaseModel):
    text: str


def gateway_for(server: FakeLLMServer, model: str) -> LLMGateway:
    settings = LLMSettings(
        default=Endpoint(base_url=server.url, api_key="k", model=model), max_retries=0, loopback_only=True
    )
    return LLMGateway(settings, InMemoryLedger(), ThreadLimiter(settings.max_concurrency))


def test_calls_that_begin_alike_go_one_by_one_to_the_embedded_model_until_the_ledger_answers_them() -> None:
    asks = [(prompt, Rewrite) for prompt in ASKS]
    with FakeLLMServer() as server, gateway_for(server, "local") as gw:
        assert gw.shares_start(asks, role="synthesizer")
        assert not gw.shares_start(asks[:1], role="synthesizer")
        gw.complete(ASKS[0], Rewrite, context=CallContext(run_id=None, role="synthesizer"))
        assert not gw.shares_start(asks, role="synthesizer")  # one left to pay for: nothing to share
        assert server.request_count == 1  # asking sends nothing
    with FakeLLMServer() as server, gateway_for(server, "gpt-hosted-elsewhere") as gw:
        assert not gw.shares_start(asks, role="synthesizer")  # another model: in parallel, as ever
