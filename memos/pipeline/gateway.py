"""The run's LLM gateway: its ledger is the LLMCall table and its concurrency bound holds across every
worker process (Redis)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from django.conf import settings

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.gateway import LLMGateway
from agents.llm.limiter import RedisLimiter
from agents.llm.roles import Role
from memos.pipeline.ledger import DjangoLedger
from memos.redis_client import redis_client


class _Override:
    settings: LLMSettings | None = None


def llm_settings() -> LLMSettings:
    llm: LLMSettings = _Override.settings or settings.LLM_SETTINGS
    return llm


@contextmanager
def endpoints(llm: LLMSettings) -> Iterator[None]:
    """Point this process's runs (all its threads) at other endpoints for a while: ``bench_run`` uses it
    to talk to the fake server without touching the configured settings."""
    previous, _Override.settings = _Override.settings, llm
    try:
        yield
    finally:
        _Override.settings = previous


class _SharedGateway:
    """One gateway per process for each of the few LLM settings in use (the configured ones, and those a
    screen's strategy derives by naming models per role).

    Building an ``openai`` client costs 50-100 ms (an HTTP client and its TLS context); the stages a process
    runs reuse one instead of paying that each time. Beyond ``KEPT`` settings, the one used longest ago is
    closed; changed settings (tests, the benchmark) get a fresh gateway.
    """

    KEPT = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gateways: dict[str, LLMGateway] = {}

    def get(self, llm: LLMSettings) -> LLMGateway:
        key = llm.model_dump_json()
        with self._lock:
            found = self._gateways.pop(key, None)
            if found is None:
                limiter = RedisLimiter(
                    redis_client(), llm.max_concurrency, kept_for_people=llm.slots_kept_for_people
                )
                found = LLMGateway(llm, DjangoLedger(), limiter)
            self._gateways[key] = found  # the newest last
            while len(self._gateways) > self.KEPT:
                oldest = next(iter(self._gateways))
                self._gateways.pop(oldest).close()
            return found


_shared = _SharedGateway()


def with_models(llm: LLMSettings, models: Mapping[str, str]) -> LLMSettings:
    """``llm`` with ``models`` (role -> model name) asked of each role's own endpoint."""
    if not models:
        return llm
    roles = dict(llm.roles)
    for role, model in models.items():
        roles[role] = llm.endpoint_for(role).model_copy(update={"model": model})
    return llm.model_copy(update={"roles": roles})


def gateway(models: Mapping[str, str] | None = None) -> LLMGateway:
    """The gateway for the configured settings, with ``models`` where a run names its own per role."""
    return _shared.get(with_models(llm_settings(), models or {}))


def second_evaluator(llm: LLMSettings | None = None) -> Endpoint | None:
    """The second evaluator's endpoint, where ``LLM_MODEL_SECOND_EVALUATOR`` (or its base URL) names another
    model than the evaluator's; None otherwise: the same model asked twice would only repeat itself."""
    config = llm or llm_settings()
    second = config.roles.get(Role.SECOND_EVALUATOR)
    first = config.endpoint_for(Role.EVALUATOR)
    if second is None or (first.base_url, first.model) == (second.base_url, second.model):
        return None
    return second
