"""A one-call connectivity check per endpoint, behind ``manage.py llm_ping``."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.prompts import PromptTemplate
from agents.llm.types import CallContext

if TYPE_CHECKING:  # the gateway imports openai (about a second): not needed to load the ping prompt's schema
    from agents.llm.gateway import LLMGateway

PING_STAGE = "llm_ping"


class PingAnswer(BaseModel):
    """Small and bounded, so even a tiny local model answers it quickly."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"]
    summary: str = Field(min_length=1, max_length=80)


@dataclass(frozen=True)
class PingResult:
    role: str
    endpoint: Endpoint
    answer: PingAnswer
    latency_ms: int


def endpoints_by_role(settings: LLMSettings, roles: Iterable[str]) -> dict[Endpoint, list[str]]:
    """Each distinct endpoint with the roles that use it: one ping per endpoint is enough."""
    grouped: dict[Endpoint, list[str]] = {}
    for role in roles:
        grouped.setdefault(settings.endpoint_for(role), []).append(role)
    return grouped


def ping(gateway: LLMGateway, template: PromptTemplate, *, role: str) -> PingResult:
    prompt = template.render({"role": role})
    started = time.monotonic()
    answer = gateway.complete(prompt, PingAnswer, context=CallContext(stage=PING_STAGE, role=role))
    latency_ms = round((time.monotonic() - started) * 1000)
    return PingResult(
        role=role, endpoint=gateway.settings.endpoint_for(role), answer=answer, latency_ms=latency_ms
    )
