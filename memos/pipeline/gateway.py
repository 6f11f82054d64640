"""The run's LLM gateway: its ledger is the LLMCall table and its concurrency bound holds across every
worker process (Redis)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

from agents.llm.config import LLMSettings
from agents.llm.gateway import LLMGateway
from agents.llm.limiter import RedisLimiter
from agents.llm.roles import Role
from memos.pipeline.ledger import DjangoLedger
from memos.pipeline.liveness import redis_client


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
    """One gateway per process for the current LLM settings.

    Building an ``openai`` client costs 50-100 ms (an HTTP client and its TLS context); the stages a process
    runs reuse one instead of paying that each time. Changed settings (tests, the benchmark) get a fresh
    gateway and the old one is closed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key = ""
        self._gateway: LLMGateway | None = None

    def get(self) -> LLMGateway:
        llm = llm_settings()
        key = llm.model_dump_json()
        with self._lock:
            if self._gateway is None or key != self._key:
                if self._gateway is not None:
                    self._gateway.close()
                limiter = RedisLimiter(redis_client(), llm.max_concurrency)
                self._gateway = LLMGateway(llm, DjangoLedger(), limiter)
                self._key = key
            return self._gateway


_shared = _SharedGateway()


def gateway() -> LLMGateway:
    return _shared.get()


def same_model_warning(llm: LLMSettings | None = None) -> str:
    """Seed 000's rubber-stamp risk: the run page warns when the evaluator shares the synthesizer's model."""
    config = llm or llm_settings()
    synthesizer, evaluator = config.endpoint_for(Role.SYNTHESIZER), config.endpoint_for(Role.EVALUATOR)
    if (synthesizer.base_url, synthesizer.model) == (evaluator.base_url, evaluator.model):
        return (
            f"The evaluator uses the same model as the synthesizer ({synthesizer.model}); its grades "
            "may share the synthesizer's blind spots. Set LLM_MODEL_EVALUATOR to a different model."
        )
    return ""
