"""The LLM gateway: a rendered prompt and a pydantic type in, a validated object out, every attempt recorded.

One call goes: endpoint for the role -> loopback guard -> ledger cache -> (budget -> limiter slot -> provider)
per attempt. Transient errors (timeout, connection, 429, 5xx, a cut-off body) are retried with backoff up to
``settings.max_retries`` times; an answer cut off at ``max_tokens`` is asked again once, unchanged, with
``LENGTH_RETRY_FACTOR`` times the budget (asking a model to be briefer rarely helps), unless it was
repeating itself (``looped``: more room would be filled the same way; a streamed answer is stopped as soon
as it loops, agents.llm.loops), which is told so, or it stopped short
of ``max_tokens`` (the server's context ran out: the call fails at once, saying so); an answer that fails
validation (or is cut again) gets one re-ask carrying the error, then the call fails with ``InvalidOutput``.
Every row of a call carries the request hash of the call as asked, so the answer that finally arrives is the
cache entry for that request, whatever budget it took. Provider and limiter failures reach the caller only
as ``LLMError`` subclasses; a failing ledger's own errors (its database) are not disguised.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from types import TracebackType
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ValidationError

from agents.llm.config import LOCAL_MODEL_ALIAS, Endpoint, LLMSettings
from agents.llm.errors import (
    BudgetExceeded,
    InvalidOutput,
    ProviderFailure,
    ProviderRefused,
    TransientError,
    TransientFailure,
)
from agents.llm.fanning import check_role
from agents.llm.hashing import request_hash
from agents.llm.ledger import CallLedger
from agents.llm.limiter import Limiter
from agents.llm.loops import STOPPED_LOOPING, loop_of, looped
from agents.llm.providers.openai_compat import openai_provider_factory
from agents.llm.schema import schema_name, strict_json_schema
from agents.llm.types import (
    CallContext,
    LLMCallRecord,
    Message,
    Outcome,
    Provider,
    ProviderRequest,
    ProviderResponse,
    RenderedPrompt,
)
from agents.llm.warm import shared_start
from agents.text.sentences import bounded

T = TypeVar("T", bound=BaseModel)
ProviderFactory = Callable[[Endpoint, float], Provider]

# The validation error goes back to the model in the re-ask; a huge one would crowd out the task.
MAX_ERROR_CHARS = 2_000
# An answer cut at max_tokens is asked again once with this many times the budget.
LENGTH_RETRY_FACTOR = 2


class _Invalid(Exception):
    """An answer arrived but is not a valid instance of the output type."""


class _Cut(_Invalid):
    """The answer stopped at max_tokens."""


class _Looped(_Cut):
    """A streamed answer whose reading the provider stopped before max_tokens: its tail repeated itself
    (agents.llm.loops)."""


class _OutOfContext(_Invalid):
    """The answer stopped short of max_tokens with finish_reason "length": the server's context window (a
    llama-server slot's share of ``-c``) ran out under the prompt. More room, or a re-ask that makes the
    prompt longer still, cannot finish it; asked again unchanged at temperature 0 it is the same answer."""


@dataclass(frozen=True)
class _Call:
    """What every ledger row of one ``complete`` call shares."""

    prompt: RenderedPrompt
    context: CallContext
    endpoint: Endpoint
    request_hash: str

    @property
    def label(self) -> str:
        return f"{self.prompt.name} for role {self.context.role!r}"

    def row(
        self,
        attempt: int,
        outcome: Outcome,
        *,
        response: ProviderResponse | None = None,
        cost: Decimal = Decimal(0),
        duration_ms: int = 0,
        error: str = "",
        raw_response: str = "",
        parsed: dict[str, Any] | None = None,
    ) -> LLMCallRecord:
        return LLMCallRecord(
            run_id=self.context.run_id,
            stage=self.context.stage,
            role=self.context.role,
            prompt_name=self.prompt.name,
            prompt_hash=self.prompt.content_hash,
            model=self.endpoint.model,
            base_url=self.endpoint.base_url,
            request_hash=self.request_hash,
            attempt=attempt,
            tokens_in=response.tokens_in if response else 0,
            tokens_out=response.tokens_out if response else 0,
            cost=cost,
            duration_ms=duration_ms,
            outcome=outcome,
            error=error,
            raw_response=response.raw if response else raw_response,
            parsed=parsed,
        )


class LLMGateway:
    def __init__(
        self,
        settings: LLMSettings,
        ledger: CallLedger,
        limiter: Limiter,
        provider_factory: ProviderFactory = openai_provider_factory,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 20.0,
        retry_after_cap_s: float = 60.0,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.limiter = limiter
        self._provider_factory = provider_factory
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self._retry_after_cap_s = retry_after_cap_s
        self._providers: dict[Endpoint, Provider] = {}
        self._providers_lock = threading.Lock()

    def complete(
        self,
        prompt: RenderedPrompt,
        output_type: type[T],
        *,
        context: CallContext,
        sent: threading.Event | None = None,
    ) -> T:
        """The model's answer in ``output_type``. ``sent`` is set once the request is about to go out (or the
        call has ended without one: answered from the ledger, refused, failed), so that the caller's thread
        may do its own work while the call is in flight without holding up its preparation: in one
        interpreter a busy thread delays another's next step by up to the switch interval, and a memo's
        evaluator call was sent only once the memo's draft, made meanwhile, had finished (8-10 ms)."""
        return self.complete_traced(prompt, output_type, context=context, sent=sent)[0]

    def complete_traced(
        self,
        prompt: RenderedPrompt,
        output_type: type[T],
        *,
        context: CallContext,
        sent: threading.Event | None = None,
    ) -> tuple[T, str]:
        """The answer and the request hash its ledger rows carry: what a row written from the answer (a
        debate's turn) keeps, to find the call that paid for it."""
        try:
            return self._complete(prompt, output_type, context, sent)
        finally:
            if sent is not None:
                sent.set()

    def _complete(
        self,
        prompt: RenderedPrompt,
        output_type: type[T],
        context: CallContext,
        sent: threading.Event | None,
    ) -> tuple[T, str]:
        check_role(context.role)  # seed 003: a verdict is never one of a fan-out's clones
        endpoint = self.settings.endpoint_for(context.role)
        if self.settings.loopback_only and not endpoint.is_loopback:
            raise ProviderRefused(
                f"refusing {endpoint.base_url} for role {context.role!r}: "
                "LLM_LOOPBACK_ONLY allows only endpoints on 127.0.0.1, localhost or ::1"
            )
        schema = strict_json_schema(output_type)
        messages = _messages(prompt)
        key = _request_key(prompt, endpoint, messages, schema)
        call = _Call(prompt=prompt, context=context, endpoint=endpoint, request_hash=key)
        # The cache comes before the budget: an answer already paid for costs nothing to reuse.
        cached = self._from_cache(call, output_type)
        if cached is not None:
            return cached, key
        request = ProviderRequest(
            model=endpoint.model,
            messages=messages,
            schema_name=schema_name(output_type),
            json_schema=schema,
            temperature=prompt.temperature,
            max_tokens=prompt.max_tokens,
            prompt_name=prompt.name,
            role=context.role,
        )
        return self._ask(call, request, output_type, sent), key

    def shares_start(self, asks: Sequence[tuple[RenderedPrompt, type[BaseModel]]], *, role: str) -> bool:
        """Whether a fan-out of ``asks`` should reach the model one call at a time: the role's model is the
        embedded one on this machine, and two or more of the calls not answered from the ledger begin with
        the same long text (a writer's re-asks: one list of figures, then each section's sentences).
        llama-server reads a prompt only past the start a slot already holds, but calls started together
        each read all of theirs (agents.llm.warm.shared_start): three re-asks sharing 2,763 tokens took
        42.6 s, then 1.0 s and 1.0 s one after the other on two cores, and all three their whole prompt's
        time started together. Sends nothing."""
        endpoint = self.settings.endpoint_for(role)
        if not (endpoint.model == LOCAL_MODEL_ALIAS and endpoint.is_loopback):
            return False
        if shared_start([prompt for prompt, _ in asks]) is None:
            return False  # a deck's re-asks, each showing its own slide's figures: no ledger lookups
        unpaid = [prompt for prompt, output_type in asks if not self._answered(prompt, output_type, endpoint)]
        return shared_start(unpaid) is not None

    def _answered(self, prompt: RenderedPrompt, output_type: type[BaseModel], endpoint: Endpoint) -> bool:
        key = _request_key(prompt, endpoint, _messages(prompt), strict_json_schema(output_type))
        hit = self.ledger.cached(key)
        return hit is not None and hit.parsed is not None

    def _from_cache(self, call: _Call, output_type: type[T]) -> T | None:
        hit = self.ledger.cached(call.request_hash)
        if hit is None or hit.parsed is None:
            return None
        try:
            result = bounded(output_type.model_validate(hit.parsed))
        except ValidationError:
            # The type's validators changed since the answer was stored: ask again rather than trust it.
            return None
        self.ledger.record(call.row(1, "cached", raw_response=hit.raw_response, parsed=hit.parsed))
        return result

    def _ask(
        self, call: _Call, request: ProviderRequest, output_type: type[T], sent: threading.Event | None = None
    ) -> T:
        provider = self._provider(call.endpoint)
        attempt = retries = 0
        reasked = enlarged = False
        while True:
            attempt += 1
            settled = _Attempt(self.ledger, call.context.run_id, self._reserve(call, attempt, request))
            try:
                started = time.monotonic()
                try:
                    with self.limiter.slot(call.endpoint.limiter_key):
                        started = time.monotonic()
                        response = _send(provider, request, sent)
                except TransientError as exc:
                    outcome: Outcome = "timeout" if exc.kind == "timeout" else "error"
                    elapsed = _ms_since(started)
                    settled.record(
                        call.row(attempt, outcome, duration_ms=elapsed, error=str(exc), raw_response=exc.raw)
                    )
                    if retries >= self.settings.max_retries:
                        raise TransientFailure(
                            f"{call.label} failed after {attempt} attempt(s): {exc}",
                            attempts=attempt,
                            last_kind=exc.kind,
                        ) from exc
                    retries += 1
                    self._sleep(self._delay(retries, exc))
                    continue
                except ProviderFailure as exc:
                    elapsed = _ms_since(started)
                    settled.record(
                        call.row(attempt, "error", duration_ms=elapsed, error=str(exc), raw_response=exc.raw)
                    )
                    raise
                elapsed = _ms_since(started)
                cost = self.settings.price_for(call.endpoint.model).cost(
                    response.tokens_in, response.tokens_out
                )
                try:
                    result = _validate(output_type, response, request.max_tokens)
                except _Invalid as exc:
                    # A model repeating itself would fill twice the room the same way: told so instead.
                    looping = isinstance(exc, _Looped) or (
                        isinstance(exc, _Cut) and looped(response.content or "")
                    )
                    enlarged, larger = (
                        enlarged or looping,
                        isinstance(exc, _Cut) and not (enlarged or looping),
                    )
                    reason = _why_invalid(exc, request.max_tokens, larger=larger, looping=looping)
                    settled.record(
                        call.row(
                            attempt,
                            "invalid",
                            response=response,
                            cost=cost,
                            duration_ms=elapsed,
                            error=reason,
                        )
                    )
                    if larger:
                        # The same request with room to finish; the ok row it earns keeps the call's hash.
                        enlarged = True
                        budget = request.max_tokens * LENGTH_RETRY_FACTOR
                        request = request.model_copy(update={"max_tokens": budget})
                        continue
                    # Out of context, a longer prompt (the re-ask) cannot fit either: the first answer tells.
                    if reasked or isinstance(exc, _OutOfContext):
                        raise _gave_up(call.label, reason, response, twice=reasked) from None
                    reasked = True
                    request = (_loop_reask if looping else _reask)(request, response, reason)
                    continue
                parsed = result.model_dump(mode="json")
                settled.record(
                    call.row(attempt, "ok", response=response, cost=cost, duration_ms=elapsed, parsed=parsed)
                )
                return result
            finally:
                settled.close()

    def close(self) -> None:
        """Close every provider's connections; a later call opens new ones."""
        with self._providers_lock:
            providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            provider.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def warm(self, roles: Iterable[str]) -> None:
        """Build the clients for these roles' endpoints now (50-100 ms each), not inside the first call."""
        for role in roles:
            self._provider(self.settings.endpoint_for(role))

    def _provider(self, endpoint: Endpoint) -> Provider:
        # One client per endpoint, shared by all threads: it keeps its HTTP connections alive between calls.
        with self._providers_lock:
            provider = self._providers.get(endpoint)
            if provider is None:
                provider = self._provider_factory(endpoint, self.settings.timeout_s)
                self._providers[endpoint] = provider
            return provider

    def _reserve(self, call: _Call, attempt: int, request: ProviderRequest) -> int:
        """Set aside the most this attempt can spend, or refuse it: parallel calls of one run cannot together
        overrun its budget, because each must fit beside the others' reservations. Returns the tokens set
        aside (0 without a budget)."""
        run_id = call.context.run_id
        if run_id is None:
            return 0  # no run
        # The budget the run started with; with budgets switched off (LLM_RUN_BUDGET_TOKENS=0) a run still
        # has one where a cap gave it one (a person's daily quota, memos.services.spending).
        budget = self.ledger.budget_of(run_id, self.settings.run_budget_tokens)
        if budget is None:
            return 0
        estimate = worst_case_tokens(request)
        if self.ledger.reserve(run_id, estimate, budget):
            return estimate
        spent = self.ledger.tokens_spent(run_id)
        message = (
            f"run {run_id} has spent {spent} of its {budget} tokens, and {call.prompt.name} could need "
            f"{estimate} more; it was not sent"
        )
        self.ledger.record(call.row(attempt, "budget", error=message))
        raise BudgetExceeded(message)

    def _delay(self, retry: int, error: TransientError) -> float:
        if error.retry_after_s is not None:
            return min(error.retry_after_s, self._retry_after_cap_s)
        ceiling = min(self._backoff_cap_s, self._backoff_base_s * 2 ** (retry - 1))
        # Half fixed, half random: retries from parallel workers spread out instead of arriving together.
        return self._rng.uniform(ceiling / 2, ceiling)


# A token is rarely shorter than three characters of the prompt; the answer is bounded by max_tokens.
CHARS_PER_TOKEN_AT_LEAST = 3


def worst_case_tokens(request: ProviderRequest) -> int:
    """What one attempt may cost at most: its prompt, estimated high, and a full answer."""
    prompt = sum(len(message.content) for message in request.messages)
    return -(-prompt // CHARS_PER_TOKEN_AT_LEAST) + request.max_tokens


class _Attempt:
    """One attempt's reservation of its run's budget, given back by the write that records the attempt: one
    statement, so its tokens count as spent as the reservation goes (never nowhere, never twice), and a call
    pays one round trip less. An attempt that ends without a row (an error no row is written for) gives it
    back on its own at ``close``."""

    def __init__(self, ledger: CallLedger, run_id: str | None, reserved: int) -> None:
        self._ledger, self._run_id, self._reserved = ledger, run_id, reserved

    def record(self, row: LLMCallRecord) -> None:
        self._ledger.record(row, released=self._reserved)
        self._reserved = 0

    def close(self) -> None:
        if self._reserved and self._run_id is not None:
            self._ledger.release(self._run_id, self._reserved)
        self._reserved = 0


def _messages(prompt: RenderedPrompt) -> tuple[Message, Message]:
    return (Message(role="system", content=prompt.system), Message(role="user", content=prompt.user))


def _request_key(
    prompt: RenderedPrompt, endpoint: Endpoint, messages: tuple[Message, Message], schema: dict[str, Any]
) -> str:
    """The ledger's key of asking ``prompt`` (sent as ``messages``) under ``schema`` at ``endpoint``."""
    return request_hash(
        base_url=endpoint.base_url,
        model=endpoint.model,
        messages=messages,
        json_schema=schema,
        temperature=prompt.temperature,
        max_tokens=prompt.max_tokens,
    )


def _send(provider: Provider, request: ProviderRequest, sent: threading.Event | None) -> ProviderResponse:
    """The request sent, its caller told first (``LLMGateway.complete``'s ``sent``)."""
    if sent is not None:
        sent.set()
    return provider.complete(request)


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _validate(output_type: type[T], response: ProviderResponse, max_tokens: int) -> T:
    if response.finish_reason == STOPPED_LOOPING:
        raise _Looped("the answer repeated itself; its reading was stopped")
    if response.finish_reason == "length":
        if 0 < response.tokens_out < max_tokens:
            raise _OutOfContext(
                f"the model's context window ran out after {response.tokens_out} tokens of answer (it may "
                f"write {max_tokens}) to a prompt of {response.tokens_in} tokens: the prompt is too long for "
                "this model's context"
            )
        raise _Cut("the answer was cut off at max_tokens; answer more briefly")
    if response.content is None:
        raise _Invalid("the answer had no text content")
    try:
        # Validated once, against the schema it was asked under, and bounded by code now: text past the bound
        # the schema sent (a pattern's allowance lets the validator take more) is cut to whole sentences, so
        # no later read of the answer under its base model can fail on a length.
        result = bounded(output_type.model_validate_json(_strip_code_fence(response.content)))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(root)'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise _Invalid(problems[:MAX_ERROR_CHARS]) from exc
    if _has_nul(result.model_dump(mode="json")):
        # A "\u0000" escape decodes to NUL, which the PostgreSQL ledger cannot store (nor anyone read).
        raise _Invalid("the answer contains a NUL character (\\u0000); write plain text")
    return result


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _gave_up(label: str, reason: str, response: ProviderResponse, *, twice: bool) -> InvalidOutput:
    why = f"the answer failed validation twice: {reason}" if twice else reason
    return InvalidOutput(f"{label}: {why}", raw=response.raw)


def _why_invalid(exc: _Invalid, bound: int, *, larger: bool, looping: bool) -> str:
    if looping:
        where = "so it was stopped before" if isinstance(exc, _Looped) else "until it was cut off at"
        return (
            f"the answer repeated itself, {where} max_tokens ({bound}): write each field once, briefly, "
            "and close the JSON"
        )
    if larger:
        return (
            f"the answer was cut off at max_tokens ({bound}); asked again with {bound * LENGTH_RETRY_FACTOR}"
        )
    return str(exc)


def _strip_code_fence(content: str) -> str:
    # Some models wrap JSON in a Markdown fence even when asked for a JSON schema.
    text = content.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        first_line, _, rest = text.partition("\n")
        return rest if first_line.strip().isalpha() else text
    return text


def _reask(request: ProviderRequest, response: ProviderResponse, reason: str) -> ProviderRequest:
    correction = (
        f"Your answer above is not valid: {reason}\n"
        f"Reply again with only a JSON object that matches the {request.schema_name} schema."
    )
    messages = (
        *request.messages,
        Message(role="assistant", content=response.content or ""),
        Message(role="user", content=correction),
    )
    return request.model_copy(update={"messages": messages})


def _loop_reask(request: ProviderRequest, response: ProviderResponse, reason: str) -> ProviderRequest:
    """A loop is told without its text: shown its own looping answer, the 1.5B wrote it again character for
    character (a screen's sector synthesis, 357 tokens of ``**a**b`` twice). The block it repeated is quoted
    once, so the model knows what not to write; the roles still alternate, as some chat templates demand."""
    block = " ".join(loop_of(response.content or "").block.split())
    correction = (
        f"Your answer above is not valid: {reason}. Answer again from the start, without writing "
        f"«{block}» over and over, with only a JSON object that matches the {request.schema_name} schema."
    )
    messages = (
        *request.messages,
        Message(role="assistant", content=f"(an answer that wrote «{block}» over and over; not shown)"),
        Message(role="user", content=correction),
    )
    return request.model_copy(update={"messages": messages})
