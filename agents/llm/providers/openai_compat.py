"""The one module that talks to the ``openai`` SDK: any OpenAI-compatible chat-completions endpoint.

The client is built with ``max_retries=0`` and an explicit timeout because the gateway owns retries; every SDK
failure is translated here into ``TransientError`` (worth another attempt) or ``ProviderFailure`` (not).
We read the response body ourselves (``parse_completion``) rather than let the SDK parse it: whatever bytes
arrive, a malformed body becomes one of those two errors, never a JSON, Unicode or recursion error. The
embedded model's answers are streamed and read as they are written, so that one that loops is stopped there
(agents.llm.providers.streaming).
"""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, cast

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)

from agents.llm.config import LOCAL_MODEL_ALIAS, Endpoint
from agents.llm.errors import ProviderFailure, TransientError, TransientKind
from agents.llm.providers.replies import first_choice, storable, token_count
from agents.llm.providers.streaming import EVENT_STREAM, STREAMED, read_stream
from agents.llm.types import Message, ProviderRequest, ProviderResponse

# llama-server's DRY sampler ("don't repeat yourself") for the embedded model: a penalty that grows with the
# length of a sequence the answer already wrote. Barred from typing a figure, the 1.5B padded a field to its
# bound with one filler over and over (spaces, then " ̂", then " –": 2,400 tokens of it); the pattern can bar
# a filler once found, not every next one. Quotes, colons and newlines break a sequence, so JSON keys that
# repeat from item to item are not penalised. Sent only to the embedded server (its alias): a hosted API
# refuses parameters it does not know.
LOCAL_SAMPLING = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2}
# 408 and 5xx are the server's trouble, 429 is ours for now; every other status means the request is wrong.
_TIMEOUT_STATUS = 408
_RATE_LIMIT_STATUS = 429
_SERVER_ERROR_MIN = 500
_UTF8_BOM = "\ufeff"


class OpenAICompatProvider:
    def __init__(
        self, endpoint: Endpoint, *, timeout_s: float, transport: httpx2.BaseTransport | None = None
    ) -> None:
        self.endpoint = endpoint
        self._timeout_s = timeout_s
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=timeout_s,
            http_client=openai.DefaultHttpxClient(
                transport=transport,
                # A redirect is not part of the API, and following one could leave the loopback endpoint.
                follow_redirects=False,
                event_hooks={"response": [_decode_as_utf8]},
            ),
        )
        # The SDK works out its platform headers on the first request and keeps them for the process; it
        # runs `uname -p` in a subprocess to do so (8 ms, a fork of the whole process). Made here, so a worker
        # makes them before it forks (memos.pipeline.worker.warm_up builds every endpoint's client) and no
        # work-horse's first call of a run forks.
        _ = self._client.default_headers

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        # The request is posted as the JSON body it is, through the client's own transport, retries off,
        # error mapping and all: the typed ``chat.completions.create`` first walks every parameter through
        # the SDK's recursive type transform (about 1.5 ms a call for a narrowed schema and a long thread, on
        # every call of a run that makes nine hundred), and this body has nothing to transform.
        body = {
            "model": request.model,
            "messages": [_message(m) for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.json_schema, "strict": True},
            },
        }
        local = self.endpoint.model == LOCAL_MODEL_ALIAS and self.endpoint.is_loopback
        if local:
            body |= LOCAL_SAMPLING | STREAMED
        headers = {"X-Analyst-Role": request.role, "X-Prompt-Name": request.prompt_name}
        try:
            if local:
                return self._streamed(body, headers)
            raw = self._client.post(
                "/chat/completions", cast_to=httpx2.Response, body=body, options={"headers": headers}
            )
        except openai.APITimeoutError as exc:
            raise TransientError(f"timed out: {exc}", kind="timeout") from exc
        except openai.APIConnectionError as exc:
            raise TransientError(f"connection failed: {exc}", kind="connection") from exc
        except openai.APIStatusError as exc:
            raise _status_error(exc) from exc
        except openai.OpenAIError as exc:
            raise ProviderFailure(f"the OpenAI client failed: {exc}") from exc
        return parse_completion(raw.content)

    def _streamed(self, body: dict[str, Any], headers: dict[str, str]) -> ProviderResponse:
        """The embedded model's answer read as it is written (agents.llm.providers.streaming): one that loops
        is stopped there, and closing the connection makes llama-server stop writing it. A reply that is not
        an event stream (a server that ignored ``stream``) is read as a whole body."""
        deadline = time.monotonic() + self._timeout_s
        # Asked for as an httpx response, the reply comes back as it is, its body unread (openai's
        # _process_response); the stream class is never used.
        response = cast(
            httpx2.Response,
            self._client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                body=body,
                options={"headers": headers},
                stream=True,
                stream_cls=openai.Stream[object],
            ),
        )
        try:
            if not response.headers.get("content-type", "").startswith(EVENT_STREAM):
                return parse_completion(response.read())
            return read_stream(response.iter_lines(), deadline=deadline)
        except httpx2.TimeoutException as exc:
            raise TransientError(f"timed out reading the answer: {exc}", kind="timeout") from exc
        except (httpx2.HTTPError, httpx2.StreamError) as exc:
            raise TransientError(f"the answer's stream broke off: {exc}", kind="connection") from exc
        finally:
            response.close()

    def close(self) -> None:
        self._client.close()


def openai_provider_factory(endpoint: Endpoint, timeout_s: float) -> OpenAICompatProvider:
    return OpenAICompatProvider(endpoint, timeout_s=timeout_s)


def _decode_as_utf8(response: httpx2.Response) -> None:
    # JSON is UTF-8 (RFC 8259), so any other charset a reply names is ignored: some (idna, rot13, zlib,
    # undefined) are not text encodings at all, and made the SDK raise their errors reading an error body.
    response.encoding = "utf-8"


def _message(message: Message) -> ChatCompletionMessageParam:
    if message.role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=message.content)
    if message.role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
    return ChatCompletionUserMessageParam(role="user", content=message.content)


def _status_error(exc: openai.APIStatusError) -> TransientError | ProviderFailure:
    status = exc.status_code
    body = storable(exc.response.text)
    message = storable(f"HTTP {status}: {exc.message}")
    if status == _RATE_LIMIT_STATUS:
        retry_after = retry_after_seconds(exc.response.headers)
        return TransientError(message, kind="rate_limit", retry_after_s=retry_after, raw=body)
    if status == _TIMEOUT_STATUS:
        return TransientError(message, kind="timeout", raw=body)
    if status >= _SERVER_ERROR_MIN:
        return TransientError(message, kind="server", raw=body)
    return ProviderFailure(message, status=status, raw=body)


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date); None if absent."""
    if millis := headers.get("retry-after-ms"):
        try:
            return _non_negative(float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return _non_negative(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(tz=UTC)).total_seconds())


def _non_negative(seconds: float) -> float | None:
    return max(0.0, seconds) if math.isfinite(seconds) else None


def parse_completion(body: bytes | str) -> ProviderResponse:
    """Read a chat-completion body ourselves. A body that is not UTF-8 JSON (cut off mid-way, an HTML page,
    nested past the parser's depth, a number too long to convert) is a transient error; JSON that is not a
    chat completion is a ``ProviderFailure``; odd field types are read as absent."""
    text = _text(body)
    raw = storable(text)
    json_text = text.removeprefix(_UTF8_BOM)  # RFC 8259 lets a parser ignore one
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        kind: TransientKind = "truncated" if _cut_off(json_text, exc) else "malformed"
        raise TransientError(_not_json(kind, exc), kind=kind, raw=raw) from exc
    except (ValueError, RecursionError) as exc:  # a 4,300-digit number; nesting deeper than the stack
        raise TransientError(_not_json("malformed", exc), kind="malformed", raw=raw) from exc
    choice = _first_choice(data)
    if choice is None:
        raise ProviderFailure("the response has no choices[0].message: not a chat completion", raw=raw)
    message = choice["message"]
    content = message.get("content")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ProviderResponse(
        content=storable(content) if isinstance(content, str) else None,
        finish_reason=storable(reason) if isinstance(reason := choice.get("finish_reason"), str) else None,
        tokens_in=token_count(usage.get("prompt_tokens")),
        tokens_out=token_count(usage.get("completion_tokens")),
        raw=raw,
        model=storable(model) if isinstance(model := data.get("model"), str) else "",
    )


def _text(body: bytes | str) -> str:
    if isinstance(body, str):
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Kept in the ledger as received, as far as text can hold it.
        raw = storable(body.decode("utf-8", errors="replace"))
        raise TransientError(f"the response body is not UTF-8: {exc}", kind="malformed", raw=raw) from exc


def _cut_off(text: str, exc: json.JSONDecodeError) -> bool:
    """The JSON broke off rather than went wrong: an open string, or the error at its very end."""
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())


def _not_json(kind: TransientKind, exc: Exception) -> str:
    if kind == "truncated":
        return f"the response body is not complete JSON: {exc}"
    return f"the response body is not JSON: {exc}"


def _first_choice(data: Any) -> dict[str, Any] | None:
    first = first_choice(data)
    return first if first is not None and isinstance(first.get("message"), dict) else None
