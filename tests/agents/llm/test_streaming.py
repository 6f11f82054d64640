"""The embedded model's answers read as they stream: the same answer as a whole body gives, a broken stream
said as one, and a loop stopped while it is written, then told to the model, with the rest never read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx2
import pytest
from pydantic import BaseModel, Field

from agents.llm.config import LOCAL_MODEL_ALIAS, Endpoint, LLMSettings
from agents.llm.errors import ProviderFailure, TransientError
from agents.llm.fakes.server import LOOP, STREAMED_LOOP_REPEATS, FakeLLMServer
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.loops import (
    CHECK_EVERY_CHARS,
    LOOP_TAIL_CHARS,
    MAX_QUOTED_BLOCK_CHARS,
    MIN_REPEATED_CHARS,
    REPEATS,
    STOPPED_LOOPING,
    Loop,
    LoopWatch,
    loop_of,
    looped,
    repeats_block,
)
from agents.llm.providers.openai_compat import OpenAICompatProvider
from agents.llm.timings import speeds_from_raw
from agents.llm.types import CallContext, Message, ProviderRequest, ProviderResponse, RenderedPrompt

LOCAL = Endpoint(base_url="http://127.0.0.1:8081/v1", api_key="not-needed", model=LOCAL_MODEL_ALIAS)
REQUEST = ProviderRequest(
    model=LOCAL_MODEL_ALIAS,
    messages=(Message(role="system", content="sys"), Message(role="user", content="usr")),
    schema_name="Reading",
    json_schema={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    temperature=0.2,
    max_tokens=900,
    prompt_name="screen_news_overview",
    role="news_analyst",
)
PROSE = " ".join(
    f"Sentence {i} says something new about margin {i * 7} and cash {i * 13}." for i in range(60)
)


def event(content: str | None = None, finish: str | None = None, **extra: object) -> bytes:
    choice = {"index": 0, "delta": {} if content is None else {"content": content}, "finish_reason": finish}
    chunk = {"object": "chat.completion.chunk", "model": "qwen", "choices": [choice], **extra}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def usage_event(prompt_tokens: int, completion_tokens: int) -> bytes:
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    chunk = {"object": "chat.completion.chunk", "choices": [], "usage": usage}
    return f"data: {json.dumps(chunk)}\n\n".encode()


Handler = Callable[[httpx2.Request], httpx2.Response]
DONE = b"data: [DONE]\n\n"


def streamed(events: list[bytes], sent: list[int] | None = None) -> Handler:
    """A transport answering with ``events`` as an event stream; ``sent`` counts the events read."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        def body() -> Iterator[bytes]:
            for item in events:
                if sent is not None:
                    sent.append(1)
                yield item

        return httpx2.Response(200, headers={"Content-Type": "text/event-stream"}, content=body())

    return handler


def ask(handler: Handler, endpoint: Endpoint = LOCAL) -> ProviderResponse:
    provider = OpenAICompatProvider(endpoint, timeout_s=5.0, transport=httpx2.MockTransport(handler))
    return provider.complete(REQUEST.model_copy(update={"model": endpoint.model}))


def test_a_streamed_answer_reads_as_the_whole_answer_with_its_usage() -> None:
    answer = '{"summary": "Energy led the week on crude."}'
    pieces = [event(answer[i : i + 5]) for i in range(0, len(answer), 5)]
    response = ask(streamed([event(""), *pieces, event(finish="stop"), usage_event(120, 14), DONE]))
    assert response.content == answer and response.finish_reason == "stop"
    assert (response.tokens_in, response.tokens_out, response.model) == (120, 14, "qwen")
    assert json.loads(response.raw)["choices"][0]["message"]["content"] == answer


def test_llama_servers_speeds_in_its_last_chunk_reach_the_ledger() -> None:
    """llama-server sends its timings with the usage; the ledger's page reads a call's speeds from the body
    kept (agents.llm.timings): streamed answers had lost them, and every embedded call showed none."""
    timings = {
        "cache_n": 462,
        "prompt_n": 2129,
        "prompt_ms": 114678.4,
        "predicted_n": 424,
        "predicted_ms": 1326.0,
    }
    usage = json.loads(usage_event(2591, 424).decode()[len("data: ") :])
    tail = f"data: {json.dumps(usage | {'timings': timings})}\n\n".encode()
    response = ask(streamed([event('{"a": 1}'), event(finish="stop"), tail, DONE]))
    speeds = speeds_from_raw(response.raw)
    assert speeds is not None
    assert (speeds.prompt_tokens, speeds.cached_tokens, speeds.generated_tokens) == (2129, 462, 424)
    # Without timings (a server that sends none): no speeds, as a whole body without them.
    assert (
        speeds_from_raw(ask(streamed([event("{}"), event(finish="stop"), usage_event(3, 1), DONE])).raw)
        is None
    )


def test_only_the_embedded_model_is_asked_to_stream() -> None:
    bodies: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return streamed([event("{}"), event(finish="stop"), DONE])(request)

    ask(handler)
    hosted = Endpoint(base_url="http://127.0.0.1:8081/v1", api_key="key", model="gpt-4.1")
    with pytest.raises(TransientError):  # it sent no body a hosted API's client reads as JSON
        ask(handler, hosted)
    local, other = bodies
    assert local["stream"] is True and local["stream_options"] == {"include_usage": True}
    assert "stream" not in other and "stream_options" not in other


def test_a_server_that_ignores_stream_is_read_as_a_whole_body() -> None:
    whole = {
        "object": "chat.completion",
        "model": "qwen",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    response = ask(lambda _: httpx2.Response(200, json=whole))
    assert (response.content, response.tokens_in) == ("{}", 3)


@pytest.mark.parametrize(
    ("events", "error", "said"),
    [
        ([event('{"summary": "Ener')], TransientError, "ended before it finished"),
        ([event("{}"), b"data: {not json\n\n"], TransientError, "not JSON"),
        ([b'data: {"error": {"message": "slot unavailable"}}\n\n'], ProviderFailure, "slot unavailable"),
        ([b"data: [1, 2]\n\n"], ProviderFailure, "not a JSON object"),
    ],
    ids=["cut-off", "garbled", "error-event", "not-an-object"],
)
def test_a_broken_stream_is_the_error_a_broken_body_is(
    events: list[bytes], error: type[Exception], said: str
) -> None:
    with pytest.raises(error, match=said):
        ask(streamed(events))


def test_a_loop_is_stopped_while_it_is_written_and_the_rest_never_read() -> None:
    loop = [event(LOOP[i : i + 8]) for i in range(0, len(LOOP), 8)] * 200  # 12,000 characters
    sent: list[int] = []
    start = '{"summary": "The market '
    response = ask(streamed([event(start), *loop, event(finish="length")], sent))
    assert response.finish_reason == STOPPED_LOOPING and response.content is not None
    # One block written out four times (and 400 characters): stopped at the next check after.
    repeated = max(REPEATS * len(LOOP), MIN_REPEATED_CHARS)
    assert len(response.content) <= len(start) + repeated + CHECK_EVERY_CHARS
    assert len(sent) < len(loop) // 5  # the connection was closed: the stream was not read to its end


def ids(count: int) -> str:
    """A list of fact ids, each of another day: alike enough to compress like a loop, never one block."""
    return "".join(
        f"[[XOM:return_1w:2017-09-{day % 28 + 1:02d}]], [[CVX:return_1w:2017-09-01]] " for day in range(count)
    )


def test_a_repetitive_stretch_that_ends_is_not_a_loop() -> None:
    # Its tail compresses like a loop's for a while, then prose again: an answer that goes on is not
    # stopped for a stretch of its middle; one that goes on repeating itself is.
    answer = PROSE[:1500] + ids(18) + PROSE
    watch, flagged = LoopWatch(), []
    for end in range(1, len(answer) + 1, 7):
        flagged.append(looped(answer[:end]))
        assert not watch.loops(answer[:end])
    assert any(flagged)  # the tail alone did look like a loop for a while
    looping, watch = PROSE[:1500] + ids(60), LoopWatch()
    assert any(watch.loops(looping[:end]) for end in range(1, len(looping) + 1, 7))


def test_a_loop_is_traced_to_where_it_began_and_the_block_it_repeats() -> None:
    # The screen's Consumer Goods synthesis began to type a figure, then wrote "**a**b" over and over.
    start = '{"synthesis": "Sales held up; alpha residual of - END babbf'
    loop = loop_of(start + "**a**b" * 90)
    assert loop.start == len(start) and loop.block == "**a**b"
    fact_ids = "[[SPY:close:2015-08-21]], [[VIX:close:2015-08-21]] "
    assert loop_of(PROSE + fact_ids * 9) == Loop(len(PROSE), fact_ids)
    # Only compressing like a loop (no one block): its last characters, from a tail's length back.
    answer = PROSE[:1500] + ids(60)
    assert loop_of(answer) == Loop(len(answer) - LOOP_TAIL_CHARS, answer[-MAX_QUOTED_BLOCK_CHARS:])


def test_one_block_written_out_four_times_is_stopped_at_the_fourth() -> None:
    # The 1.5B's market overview, as it began (four fact ids, again and again from its first sentence): the
    # compression test alone stopped it at 1,411 characters, 846 of its 900 tokens.
    start = '{\n  "summary": "The week ended s: '
    block = (
        "[[SPY:sma50_distance_pct:2015-08-21]], [[SPY:sma200_distance_pct:2015-08-21]] "
        "[[VIX:close:2015-08-21]],[[SPY:return_1w:2015-08-21]]"
    )
    answer, watch = start + block * 12, LoopWatch()
    stopped = next(end for end in range(1, len(answer) + 1, 5) if watch.loops(answer[:end]))
    assert stopped <= len(start) + REPEATS * len(block) + CHECK_EVERY_CHARS
    assert not repeats_block(start + block * (REPEATS - 1))
    assert repeats_block(PROSE + " " * MIN_REPEATED_CHARS)  # a filler of one character
    assert not repeats_block(PROSE + " " * (MIN_REPEATED_CHARS - 1))


class Reading(BaseModel):
    summary: str = Field(min_length=3, max_length=4000)


def test_the_gateway_tells_a_stopped_loop_to_the_model_and_the_fake_server_stops_writing() -> None:
    with FakeLLMServer() as server:
        endpoint = Endpoint(base_url=server.url, api_key="not-needed", model=LOCAL_MODEL_ALIAS)
        settings = LLMSettings.model_validate({"default": endpoint, "timeout_s": 5.0, "loopback_only": True})
        ledger = InMemoryLedger()
        gateway = LLMGateway(settings, ledger=ledger, limiter=ThreadLimiter(2))
        server.inject("looping")
        try:
            prompt = RenderedPrompt(
                name="screen_news_overview",
                version=1,
                content_hash="b" * 64,
                system="You read the news.",
                user="What moved the market?",
                temperature=0.2,
                max_tokens=900,
            )
            context = CallContext(run_id="r", stage="news", role="news_analyst")
            gateway.complete(prompt, Reading, context=context)
        finally:
            gateway.close()
        first, second = server.requests
    assert [row.outcome for row in ledger.records] == ["invalid", "ok"]
    assert "repeated itself, so it was stopped before max_tokens (900)" in ledger.records[0].error
    assert first["streamed_chars"] < len(LOOP) * STREAMED_LOOP_REPEATS / 2  # not read to the loop's end
    reask = second["body"]["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    # Told without its looping text (shown it, the 1.5B wrote it again): the block it repeated, once.
    said = reask[2]["content"] + reask[3]["content"]
    assert " ".join(LOOP.split()) in said and said.count("[[XOM:return_1w:2017-09-01]]") == 2
    assert "repeated itself" in reask[3]["content"] and len(said) < 600
    assert second["body"]["max_tokens"] == 900  # not given twice the room
