"""The agent roles that call the LLM; each may have its own endpoint (``LLM_MODEL_<ROLE>`` and friends)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    FUNDAMENTALS = "fundamentals"
    COMPETITIVE = "competitive"
    MACRO = "macro"
    REGULATORY = "regulatory"
    QUANT = "quant"
    NEWS = "news"
    SYNTHESIZER = "synthesizer"
    EVALUATOR = "evaluator"


ALL_ROLES: tuple[Role, ...] = tuple(Role)
