"""Values crossing the gateway's boundaries: prompts in, provider requests and responses, ledger rows out."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["ok", "cached", "invalid", "error", "timeout", "budget"]


class RenderedPrompt(BaseModel):
    """A prompt file with its variables filled in: exactly what will be sent, plus where it came from."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: int
    content_hash: str  # sha256 of the prompt file's bytes
    system: str
    user: str
    temperature: float
    max_tokens: int


class CallContext(BaseModel):
    """Who is asking: the run (for the budget and the ledger), the pipeline stage and the agent role."""

    model_config = ConfigDict(frozen=True)

    run_id: str | None = None
    stage: str = ""
    role: str


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class ProviderRequest(BaseModel):
    """One chat-completion request with a JSON-schema response format."""

    model_config = ConfigDict(frozen=True)

    model: str
    messages: tuple[Message, ...]
    schema_name: str
    json_schema: dict[str, Any]
    temperature: float
    max_tokens: int
    prompt_name: str
    role: str


class ProviderResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str | None
    finish_reason: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    raw: str = ""  # the response body as received (a stream: the completion its events add up to), kept
    model: str = ""


class Provider(Protocol):
    """An OpenAI-compatible backend; raises ``TransientError`` or ``ProviderFailure`` and nothing else."""

    def complete(self, request: ProviderRequest) -> ProviderResponse: ...

    def close(self) -> None:
        """Release connections; the gateway calls it once it is closed itself."""


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def new_attempt_id() -> str:
    return uuid.uuid4().hex


class LLMCallRecord(BaseModel):
    """One attempt at one request (or one answer from the cache, or one refusal for budget): a ledger row.

    ``attempt_id`` is unique per record: a ledger that retries a write after losing its connection uses it to
    find a row that did land, so no attempt is recorded (or charged) twice.
    """

    model_config = ConfigDict(frozen=True)

    attempt_id: str = Field(default_factory=new_attempt_id)
    run_id: str | None
    stage: str
    role: str
    prompt_name: str
    prompt_hash: str
    model: str
    base_url: str
    request_hash: str
    attempt: int
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal(0)
    duration_ms: int = 0
    outcome: Outcome
    error: str = ""
    raw_response: str = ""
    parsed: dict[str, Any] | None = None
    created_at: datetime = Field(default_factory=utc_now)
