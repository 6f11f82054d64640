"""An in-process fake provider: the gateway's whole path (cache, retries, re-ask, ledger) with no HTTP.

    fake = FakeProvider(answers=[{"status": "ok"}, TransientError("boom", kind="server")])
    gateway = LLMGateway(settings, InMemoryLedger(), ThreadLimiter(2), provider_factory=fake.factory)

An answer is a dict (sent as JSON content), a str (sent as the content verbatim), a ``ProviderResponse``
(sent as is, for finish_reason or token counts), or an exception (raised). Routes, keyed by prompt name or
role, are callables ``request -> answer`` and win over the queue; with neither, a schema-valid example is
made up.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents.llm.config import Endpoint
from agents.llm.errors import ProviderFailure
from agents.llm.fakes.schema_example import UnsupportedSchema, example_for_schema
from agents.llm.types import ProviderRequest, ProviderResponse

Answer = dict[str, Any] | str | ProviderResponse | Exception
Route = Callable[[ProviderRequest], Answer]

CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    """About four characters a token, as for English with common tokenizers; at least one."""
    return max(1, len(text) // CHARS_PER_TOKEN)


class FakeProvider:
    def __init__(
        self,
        answers: Iterable[Answer] = (),
        *,
        routes: Mapping[str, Route] | None = None,
        generate_when_empty: bool = True,
    ) -> None:
        self._queue: deque[Answer] = deque(answers)
        self._routes = dict(routes or {})
        self._generate = generate_when_empty
        self._lock = threading.Lock()
        self.history: list[ProviderRequest] = []
        self.endpoints: list[Endpoint] = []

    def factory(self, endpoint: Endpoint, timeout_s: float) -> FakeProvider:
        """Pass as the gateway's ``provider_factory``; remembers which endpoints the gateway asked for."""
        with self._lock:
            self.endpoints.append(endpoint)
        return self

    def close(self) -> None:
        """Nothing to release: no connections."""

    def queue(self, *answers: Answer) -> None:
        with self._lock:
            self._queue.extend(answers)

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        with self._lock:
            self.history.append(request)
            seed = len(self.history)
            route = self._routes.get(request.prompt_name) or self._routes.get(request.role)
            queued = self._queue.popleft() if route is None and self._queue else None
        if route is not None:
            return _response(request, route(request))
        if queued is not None:
            return _response(request, queued)
        if not self._generate:
            raise ProviderFailure(f"FakeProvider has no answer for {request.prompt_name!r} ({request.role})")
        try:
            example = example_for_schema(request.json_schema, seed=seed)
        except UnsupportedSchema as exc:
            raise ProviderFailure(f"FakeProvider cannot make up an answer: {exc}") from exc
        return _response(request, json.dumps(example))


def _response(request: ProviderRequest, answer: Answer) -> ProviderResponse:
    if isinstance(answer, Exception):
        raise answer
    if isinstance(answer, ProviderResponse):
        return answer
    content = answer if isinstance(answer, str) else json.dumps(answer)
    tokens_in = sum(approx_tokens(m.content) for m in request.messages)
    return ProviderResponse(
        content=content,
        finish_reason="stop",
        tokens_in=tokens_in,
        tokens_out=approx_tokens(content),
        raw=json.dumps({"fake": True, "content": content}),
        model=request.model,
    )
