"""Warming a model server's prompt cache: the system texts go to servers on this machine only, one token
asked of each, and a failure is said without stopping the rest."""

from __future__ import annotations

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.warm import WARM_QUESTION, WarmPrompt, warm

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
