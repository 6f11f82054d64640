"""A chat completion read as it is streamed (server-sent events), so that an answer that loops is stopped
while it is written (agents.llm.loops) instead of read to its ``max_tokens``.

Only the embedded model is asked to stream (agents.llm.providers.openai_compat): llama-server cancels a
request whose client closed the connection, so a stopped loop frees its slot at once. Each event is one
``data:`` line holding a JSON chunk: a piece of the answer (``choices[0].delta.content``), then its finish
reason, then (asked with ``stream_options.include_usage``) the token counts; ``data: [DONE]`` ends it. A line
that is not JSON, an error event or a stream that ends before a finish reason are the same errors a whole
body would give (``TransientError`` or ``ProviderFailure``): nothing here raises anything else.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from agents.llm.errors import ProviderFailure, TransientError
from agents.llm.loops import STOPPED_LOOPING, LoopWatch
from agents.llm.providers.replies import first_choice, storable, token_count
from agents.llm.types import ProviderResponse

# What the request adds to be streamed, with its token counts in a last chunk.
STREAMED = {"stream": True, "stream_options": {"include_usage": True}}
EVENT_STREAM = "text/event-stream"
_DATA = "data:"
_DONE = "[DONE]"
_ERROR_CHARS = 500


def read_stream(lines: Iterable[str], *, deadline: float) -> ProviderResponse:
    """The answer that ``lines`` (an event stream's lines) add up to. Stops reading, with the finish reason
    ``STOPPED_LOOPING``, once the answer loops; raises ``TransientError`` (kind "timeout") past ``deadline``
    (a ``time.monotonic()``: the whole answer's time, as a body's read is bounded by the client's timeout)."""
    content, finish_reason, model = "", None, ""
    usage: dict[str, Any] = {}
    timings: dict[str, Any] | None = None  # llama-server's speeds, in its last chunk (agents.llm.timings)
    pieces = 0
    watch = LoopWatch()
    for line in lines:
        if time.monotonic() > deadline:
            raise TransientError("timed out: the streamed answer ran past the call's timeout", kind="timeout")
        if not line.startswith(_DATA):
            continue  # a blank separator, a comment (": ping"), an event name
        data = line[len(_DATA) :].strip()
        if data == _DONE:
            break
        chunk = _chunk(data)
        model = chunk["model"] if isinstance(chunk.get("model"), str) else model
        usage = chunk["usage"] if isinstance(chunk.get("usage"), dict) else usage
        timings = chunk["timings"] if isinstance(chunk.get("timings"), dict) else timings
        choice = first_choice(chunk)
        if choice is None:
            continue  # the usage chunk has no choices
        delta = choice.get("delta")
        piece = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(piece, str) and piece:
            content += piece
            pieces += 1
            if watch.loops(content):
                finish_reason = STOPPED_LOOPING
                break
        if isinstance(reason := choice.get("finish_reason"), str):
            finish_reason = reason
    if finish_reason is None:
        raise TransientError("the streamed answer ended before it finished", kind="truncated")
    tokens_in = token_count(usage.get("prompt_tokens"))
    tokens_out = token_count(usage.get("completion_tokens")) or pieces  # a stopped stream reports no usage
    whole = {
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out},
    }
    if timings is not None:  # kept as sent: the ledger's page reads the call's speeds from it
        whole["timings"] = timings
    return ProviderResponse(
        content=storable(content),
        finish_reason=storable(finish_reason),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        raw=storable(json.dumps(whole, ensure_ascii=False)),
        model=storable(model),
    )


def _chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError) as exc:  # a JSONDecodeError is a ValueError
        raise TransientError(
            f"a streamed chunk is not JSON: {exc}", kind="malformed", raw=storable(data[:_ERROR_CHARS])
        ) from exc
    if not isinstance(chunk, dict):
        raise ProviderFailure("a streamed chunk is not a JSON object", raw=storable(data[:_ERROR_CHARS]))
    if "error" in chunk:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderFailure(
            f"the server stopped the answer with an error: {str(message)[:_ERROR_CHARS]}",
            raw=storable(data[:_ERROR_CHARS]),
        )
    return chunk
