"""The one module that talks to the ``openai`` SDK: any OpenAI-compatible chat-completions endpoint.

The client is built with ``max_retries=0`` and an explicit timeout because the gateway owns retries; every SDK
failure is translated here into ``TransientError`` (worth another attempt) or ``ProviderFailure`` (not).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)

from agents.llm.config import Endpoint
from agents.llm.errors import ProviderFailure, TransientError
from agents.llm.types import Message, ProviderRequest, ProviderResponse

# 408 and 5xx are the server's trouble, 429 is ours for now; every other status means the request is wrong.
_TIMEOUT_STATUS = 408
_RATE_LIMIT_STATUS = 429
_SERVER_ERROR_MIN = 500


class OpenAICompatProvider:
    def __init__(
        self, endpoint: Endpoint, *, timeout_s: float, http_client: httpx2.Client | None = None
    ) -> None:
        self.endpoint = endpoint
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client,
        )

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        try:
            raw = self._client.chat.completions.with_raw_response.create(
                model=request.model,
                messages=[_message(m) for m in request.messages],
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.schema_name,
                        "schema": request.json_schema,
                        "strict": True,
                    },
                },
                extra_headers={"X-Analyst-Role": request.role, "X-Prompt-Name": request.prompt_name},
            )
        except openai.APITimeoutError as exc:
            raise TransientError(f"timed out: {exc}", kind="timeout") from exc
        except openai.APIConnectionError as exc:
            raise TransientError(f"connection failed: {exc}", kind="connection") from exc
        except openai.APIStatusError as exc:
            raise _status_error(exc) from exc
        except openai.OpenAIError as exc:
            raise ProviderFailure(f"the OpenAI client failed: {exc}") from exc
        return parse_completion(raw.http_response.text)

    def close(self) -> None:
        self._client.close()


def openai_provider_factory(endpoint: Endpoint, timeout_s: float) -> OpenAICompatProvider:
    return OpenAICompatProvider(endpoint, timeout_s=timeout_s)


def _message(message: Message) -> ChatCompletionMessageParam:
    if message.role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=message.content)
    if message.role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
    return ChatCompletionUserMessageParam(role="user", content=message.content)


def _status_error(exc: openai.APIStatusError) -> TransientError | ProviderFailure:
    status = exc.status_code
    body = exc.response.text
    message = f"HTTP {status}: {exc.message}"
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


def parse_completion(body: str) -> ProviderResponse:
    """Read a chat-completion body ourselves: a body cut off mid-JSON is a transient error, not a crash."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise TransientError(
            f"the response body is not complete JSON: {exc}", kind="truncated", raw=body
        ) from exc
    choice = _first_choice(data)
    if choice is None:
        raise ProviderFailure("the response has no choices[0].message: not a chat completion", raw=body)
    message = choice["message"]
    content = message.get("content")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ProviderResponse(
        content=content if isinstance(content, str) else None,
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
        raw=body,
        model=data.get("model") if isinstance(data.get("model"), str) else "",
    )


def _first_choice(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    first: dict[str, Any] = choices[0]
    return first if isinstance(first.get("message"), dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
