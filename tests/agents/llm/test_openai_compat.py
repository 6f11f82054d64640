"""The provider module: what goes on the wire, and how every SDK failure is translated."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any, cast

import httpx2
import pytest
from openai._base_client import platform_headers

from agents.llm.config import Endpoint
from agents.llm.errors import ProviderFailure, TransientError
from agents.llm.providers.openai_compat import (
    LOCAL_SAMPLING,
    OpenAICompatProvider,
    parse_completion,
    retry_after_seconds,
)
from agents.llm.providers.replies import MAX_TOKEN_COUNT
from agents.llm.types import Message, ProviderRequest

ENDPOINT = Endpoint(base_url="http://127.0.0.1:8081/v1", api_key="secret-key", model="local")
REQUEST = ProviderRequest(
    model="local",
    messages=(Message(role="system", content="sys"), Message(role="user", content="usr")),
    schema_name="Verdict",
    json_schema={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    temperature=0.1,
    max_tokens=64,
    prompt_name="verdict",
    role="evaluator",
)


def completion(content: str | None = '{"ok": true}', finish_reason: str = "stop") -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "local-q4",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def provider(handler: Callable[[httpx2.Request], httpx2.Response]) -> OpenAICompatProvider:
    return OpenAICompatProvider(ENDPOINT, timeout_s=1.0, transport=httpx2.MockTransport(handler))


def test_it_sends_the_json_schema_format_the_role_headers_and_the_key() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=completion())

    response = provider(handler).complete(REQUEST)
    [sent] = seen
    body = json.loads(sent.content)
    assert str(sent.url) == "http://127.0.0.1:8081/v1/chat/completions"
    assert sent.headers["Authorization"] == "Bearer secret-key"
    assert (sent.headers["X-Analyst-Role"], sent.headers["X-Prompt-Name"]) == ("evaluator", "verdict")
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Verdict", "schema": REQUEST.json_schema, "strict": True},
    }
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "usr"}]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("local", 0.1, 64)
    assert (response.content, response.finish_reason, response.tokens_in, response.tokens_out) == (
        '{"ok": true}',
        "stop",
        11,
        7,
    )
    assert response.model == "local-q4"
    assert json.loads(response.raw) == completion()


def test_the_embedded_server_alone_is_asked_to_sample_against_repeated_fillers() -> None:
    """DRY goes to the embedded llama-server (its alias, on loopback); a hosted API would refuse it."""
    bodies: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=completion())

    provider(handler).complete(REQUEST)
    hosted = Endpoint(base_url="http://127.0.0.1:8081/v1", api_key="secret-key", model="gpt-4.1")
    OpenAICompatProvider(hosted, timeout_s=1.0, transport=httpx2.MockTransport(handler)).complete(
        REQUEST.model_copy(update={"model": "gpt-4.1"})
    )
    local, other = bodies
    assert {key: local[key] for key in LOCAL_SAMPLING} == LOCAL_SAMPLING
    assert not set(LOCAL_SAMPLING) & set(other)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(408, "timeout"), (429, "rate_limit"), (500, "server"), (502, "server"), (503, "server")],
)
def test_transient_statuses_become_transient_errors(status: int, kind: str) -> None:
    with pytest.raises(TransientError) as raised:
        provider(lambda _: httpx2.Response(status, json={"error": {"message": "busy"}})).complete(REQUEST)
    assert raised.value.kind == kind
    assert "busy" in raised.value.raw


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_statuses_are_permanent_failures(status: int) -> None:
    with pytest.raises(ProviderFailure) as raised:
        provider(lambda _: httpx2.Response(status, json={"error": {"message": "no"}})).complete(REQUEST)
    assert raised.value.status == status


def test_a_429_carries_its_retry_after() -> None:
    reply = httpx2.Response(429, json={"error": {"message": "slow down"}}, headers={"Retry-After": "7"})
    with pytest.raises(TransientError) as raised:
        provider(lambda _: reply).complete(REQUEST)
    assert raised.value.retry_after_s == 7.0


def test_timeouts_and_refused_connections_are_transient() -> None:
    def timeout(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("slow", request=request)

    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with pytest.raises(TransientError) as slow:
        provider(timeout).complete(REQUEST)
    with pytest.raises(TransientError) as down:
        provider(refused).complete(REQUEST)
    assert (slow.value.kind, down.value.kind) == ("timeout", "connection")


def test_a_truncated_200_body_is_a_transient_error_not_a_bare_json_error() -> None:
    whole = json.dumps(completion()).encode()
    reply = httpx2.Response(200, content=whole[:40], headers={"Content-Type": "application/json"})
    with pytest.raises(TransientError) as raised:
        provider(lambda _: reply).complete(REQUEST)
    assert raised.value.kind == "truncated"
    assert raised.value.raw == whole[:40].decode()


def test_a_body_that_is_not_a_chat_completion_is_a_permanent_failure() -> None:
    with pytest.raises(ProviderFailure, match="not a chat completion"):
        parse_completion('{"object": "list", "data": []}')
    with pytest.raises(ProviderFailure):
        parse_completion('{"choices": [{"index": 0}]}')


def test_missing_usage_counts_zero_and_a_null_content_is_kept_as_none() -> None:
    body = completion(content=None, finish_reason="content_filter")
    del body["usage"]
    response = parse_completion(json.dumps(body))
    assert (response.content, response.finish_reason, response.tokens_in, response.tokens_out) == (
        None,
        "content_filter",
        0,
        0,
    )


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    assert retry_after_seconds(httpx2.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    later = format_datetime(datetime.now(tz=UTC) + timedelta(seconds=30), usegmt=True)
    from_date = retry_after_seconds(httpx2.Headers({"retry-after": later}))
    assert from_date is not None and 28 <= from_date <= 30
    assert retry_after_seconds(httpx2.Headers({"retry-after": "-4"})) == 0.0
    assert retry_after_seconds(httpx2.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx2.Headers({})) is None


def reply_with(
    body: bytes, status: int = 200, content_type: str = "application/json"
) -> Callable[[httpx2.Request], httpx2.Response]:
    return lambda _: httpx2.Response(status, content=body, headers={"Content-Type": content_type})


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        b"\xff" + json.dumps(completion()).encode(),
        json.dumps(completion()).encode().replace(b"local-q4", b"local-\xc3\x28"),
        b"[" * 100_000,
        b'{"choices": [], "usage": {"prompt_tokens": 1' + b"0" * 5000 + b"}}",
    ],
    ids=["html", "invalid-utf8-outside", "invalid-utf8-inside", "recursion-bomb", "5000-digit-number"],
)
def test_a_body_that_is_not_utf8_json_is_a_transient_malformed_error(body: bytes) -> None:
    with pytest.raises(TransientError) as raised:
        provider(reply_with(body)).complete(REQUEST)
    assert raised.value.kind == "malformed"
    assert raised.value.raw == body.decode("utf-8", errors="replace")


def test_a_leading_byte_order_mark_is_ignored() -> None:
    response = provider(reply_with(b"\xef\xbb\xbf" + json.dumps(completion()).encode())).complete(REQUEST)
    assert response.content == '{"ok": true}'


@pytest.mark.parametrize("charset", ["idna", "punycode", "rot13", "zlib", "base64", "undefined", "utf-16"])
def test_a_charset_other_than_utf8_is_ignored_even_one_that_is_no_text_encoding(charset: str) -> None:
    content_type = f"application/json; charset={charset}"
    ok = provider(reply_with(json.dumps(completion()).encode(), content_type=content_type)).complete(REQUEST)
    assert ok.content == '{"ok": true}'
    refused = reply_with(b'\xff{"error": {"message": "no"}}', status=400, content_type=content_type)
    with pytest.raises(ProviderFailure, match="HTTP 400"):
        provider(refused).complete(REQUEST)


def test_a_redirect_is_not_followed_even_to_the_same_path_or_another_host() -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        location = "https://api.openai.com/v1/chat/completions" if len(seen) == 1 else str(request.url)
        return httpx2.Response(307, headers={"Location": location})

    with pytest.raises(ProviderFailure) as raised:
        provider(handler).complete(REQUEST)
    assert raised.value.status == 307
    assert seen == ["http://127.0.0.1:8081/v1/chat/completions"]


def test_nul_and_lone_surrogates_from_json_escapes_become_replacement_characters() -> None:
    body = json.dumps(completion(content="\ud800{}\u0000", finish_reason="st\udc00op") | {"model": "m\ud800"})
    response = parse_completion(body)
    assert (response.content, response.finish_reason, response.model) == (
        "\ufffd{}\ufffd",
        "st\ufffdop",
        "m\ufffd",
    )
    assert "\\ud800" in response.raw and "\x00" not in response.raw
    error = json.dumps({"error": {"message": "bad \ud800 \u0000 request"}}).encode()
    with pytest.raises(ProviderFailure) as raised:
        provider(reply_with(error, status=422)).complete(REQUEST)
    assert "bad \ufffd \ufffd request" in str(raised.value)
    str(raised.value).encode("utf-8")  # a ledger can store it


@pytest.mark.parametrize(
    ("count", "counted"),
    [(True, 0), (1.5, 0), ("7", 0), (-3, 0), (None, 0), (10**30, MAX_TOKEN_COUNT), (123, 123)],
)
def test_a_token_count_that_is_not_a_plain_count_is_zero_and_an_absurd_one_is_capped(
    count: object, counted: int
) -> None:
    body = completion() | {"usage": {"prompt_tokens": count, "completion_tokens": count}}
    response = parse_completion(json.dumps(body))
    assert (response.tokens_in, response.tokens_out) == (counted, counted)


def test_a_client_made_before_a_fork_leaves_its_first_request_nothing_to_spawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's platform headers (worked out once per process, with `uname -p` in a subprocess) are made with
    the client, which a worker builds before it forks: a work-horse's first call spawns nothing."""
    cast(Any, platform_headers).cache_clear()  # the SDK's lru_cache, typed as the function it wraps
    made = provider(lambda request: httpx2.Response(200, json=completion()))
    spawned: list[object] = []
    real = subprocess.Popen.__init__

    def spying(self: subprocess.Popen[bytes], *args: Any, **kwargs: Any) -> None:
        spawned.append(args[0] if args else kwargs.get("args"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", spying)

    made.complete(REQUEST)

    assert spawned == []
