"""The run's LLM plumbing: prompt templates (loaded and validated once, at start-up) and a gateway whose
ledger is the LLMCall table and whose concurrency bound holds across every worker process (Redis)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import redis
from django.conf import settings

from agents.llm.config import LLMSettings
from agents.llm.gateway import LLMGateway
from agents.llm.limiter import RedisLimiter
from agents.llm.prompts import PromptTemplate, load_prompt_dir
from agents.llm.roles import Role
from memos.ledger import DjangoLedger


@lru_cache(maxsize=1)
def templates() -> dict[str, PromptTemplate]:
    """Every prompt in ``prompts/``, by name; a malformed file stops start-up with a message naming it."""
    return load_prompt_dir(Path(settings.BASE_DIR) / "prompts")


def template(name: str) -> PromptTemplate:
    return templates()[name]


def llm_settings() -> LLMSettings:
    llm: LLMSettings = settings.LLM_SETTINGS
    return llm


def gateway() -> LLMGateway:
    llm = llm_settings()
    client = redis.Redis.from_url(settings.REDIS_URL)
    return LLMGateway(llm, DjangoLedger(), RedisLimiter(client, llm.max_concurrency))


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
