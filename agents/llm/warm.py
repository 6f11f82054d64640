"""Reading the text every call of a role begins with into a model server's prompt cache, before any run.

A prompt's system section is the same for every run that pins its version (the line naming the run's fence
nonce comes after it), and it is its longest part shared across companies: 450-1,650 tokens, which the
embedded 1.5B reads at about 65 tokens a second on two cores. llama-server keeps what it has read (each
slot's last prompt, and more in its host-memory prompt cache) and reads a new prompt only past the longest
start it already holds: a fresh desk's first quick memo read 4,367 of its 11,898 prompt tokens so warmed.
Only servers on this machine are warmed (a hosted API bills what it reads); one request at a time, a single
token written, nothing recorded in the ledger: a warm-up belongs to no run and is never an answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.errors import ProviderFailure, TransientError
from agents.llm.schema import schema_name, strict_json_schema
from agents.llm.types import Message, Provider, ProviderRequest, RenderedPrompt

# What the warm-up asks after the system text: any short user turn will do, and one token of answer.
WARM_QUESTION = "Reply with ok."
# What the request's prompt name (X-Prompt-Name) begins with: a warm-up of that prompt, not the prompt.
WARM_PREFIX = "warm:"


class WarmAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"]


@dataclass(frozen=True)
class WarmPrompt:
    role: str  # whose endpoint reads it
    name: str  # the prompt's name, for the log
    system: str  # the system text every call of the role begins with


# A shared start shorter than this (about 500 tokens) is not worth waiting for.
MIN_SHARED_CHARS = 2_000


def shared_start(prompts: Sequence[RenderedPrompt]) -> str | None:
    """What every one of ``prompts`` begins with, when that is long: their system text (the same for all)
    and the start of their user messages they have in common, cut at its last line's end. None for fewer
    than two prompts, other system texts, or a short start.

    llama-server reads a new prompt only past the longest start a slot holds, and what one slot read serves
    one other slot at a time: prompts started together each read all of theirs. On the embedded model such
    calls are better sent one after the other (LLMGateway.shares_start)."""
    if len(prompts) < 2 or len({prompt.system for prompt in prompts}) != 1:
        return None
    common = _common_start([prompt.user for prompt in prompts])
    common = common[: common.rfind("\n") + 1]
    if len(prompts[0].system) + len(common) < MIN_SHARED_CHARS or not common.strip():
        return None
    return prompts[0].system + common


@dataclass(frozen=True)
class Warmed:
    prompt: WarmPrompt
    endpoint: Endpoint | None  # None: not warmed, the role's model is not on this machine
    tokens: int = 0  # the warm prompt's length, as the server counted it
    seconds: float = 0.0
    error: str = ""


def _common_start(texts: Sequence[str]) -> str:
    # The lexically first and last of the texts differ where any two of them first do.
    first, last = min(texts), max(texts)
    for index, (a, b) in enumerate(zip(first, last, strict=False)):
        if a != b:
            return first[:index]
    return first


def warm(
    settings: LLMSettings,
    prompts: Sequence[WarmPrompt],
    *,
    timeout_s: float = 300.0,
) -> Iterator[Warmed]:
    """Send each prompt's system text to its role's endpoint when that is on loopback, one after the other;
    yields what happened to each (a failure is said, and the next is tried: a warm-up is never required)."""
    from agents.llm.providers.openai_compat import openai_provider_factory  # the SDK: only when warming

    opened: dict[Endpoint, Provider] = {}
    try:
        for prompt in prompts:
            endpoint = settings.endpoint_for(prompt.role)
            if not endpoint.is_loopback:
                yield Warmed(prompt, None)
                continue
            if endpoint not in opened:
                opened[endpoint] = openai_provider_factory(endpoint, timeout_s)
            yield _warm_one(opened[endpoint], endpoint, prompt)
    finally:
        for provider in opened.values():
            provider.close()


def _warm_one(provider: Provider, endpoint: Endpoint, prompt: WarmPrompt) -> Warmed:
    request = ProviderRequest(
        model=endpoint.model,
        messages=(Message(role="system", content=prompt.system), Message(role="user", content=WARM_QUESTION)),
        schema_name=schema_name(WarmAnswer),
        json_schema=strict_json_schema(WarmAnswer),
        temperature=0.0,
        max_tokens=1,
        # Not the prompt's own name: a server keyed by it (the fake's scripts) would answer it as that prompt.
        prompt_name=f"{WARM_PREFIX}{prompt.name}",
        role=prompt.role,
    )
    started = time.monotonic()
    try:
        response = provider.complete(request)
    except (TransientError, ProviderFailure) as exc:
        return Warmed(prompt, endpoint, seconds=time.monotonic() - started, error=str(exc))
    return Warmed(prompt, endpoint, tokens=response.tokens_in, seconds=time.monotonic() - started)
