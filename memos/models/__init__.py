"""Rows of the Analyst Desk, one module per feature. Models hold the rules about one row; workflows across
rows live in ``memos.services`` and the run engine in ``memos.pipeline``."""

from memos.models.accounts import DemoSeeding
from memos.models.facts import Company, DataLoad, FactRecord, SourceDocument
from memos.models.governance import PromptVersion, RubricVersion
from memos.models.ledger import LLMCall
from memos.models.runs import DEFAULT_AUDIENCE, AgentStep, Brief, Run, StageClaim

__all__ = [
    "DEFAULT_AUDIENCE",
    "AgentStep",
    "Brief",
    "Company",
    "DataLoad",
    "DemoSeeding",
    "FactRecord",
    "LLMCall",
    "PromptVersion",
    "RubricVersion",
    "Run",
    "SourceDocument",
    "StageClaim",
]
