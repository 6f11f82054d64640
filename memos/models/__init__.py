"""Rows of the Analyst Desk, one module per feature. Models hold the rules about one row; workflows across
rows live in ``memos.services`` and the run engine in ``memos.pipeline``."""

from memos.models.accounts import DemoSeeding, PasswordResetRequest
from memos.models.agency import DebateTurn, Move, MoveScore
from memos.models.calibration import Calibration, GoldScore
from memos.models.facts import Company, DataLoad, FactRecord, RawResponse, SourceDocument
from memos.models.falsifiers import FalsifierWatch
from memos.models.governance import PromptVersion, RubricVersion
from memos.models.ledger import LLMCall
from memos.models.runs import DEFAULT_AUDIENCE, DEFAULT_WORKFLOW, AgentStep, Brief, Run, StageClaim
from memos.models.schedules import MemoSchedule, RefineSchedule, WeekSchedule
from memos.models.versions import (
    ArtefactVersion,
    AuditEvent,
    Motion,
    Notice,
    PendingPrint,
    ReviewPolicy,
    VersionFile,
    Vote,
)

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_WORKFLOW",
    "AgentStep",
    "ArtefactVersion",
    "AuditEvent",
    "Brief",
    "Calibration",
    "Company",
    "DataLoad",
    "DebateTurn",
    "DemoSeeding",
    "FactRecord",
    "FalsifierWatch",
    "GoldScore",
    "LLMCall",
    "MemoSchedule",
    "Motion",
    "Move",
    "MoveScore",
    "Notice",
    "PasswordResetRequest",
    "PendingPrint",
    "PromptVersion",
    "RawResponse",
    "RefineSchedule",
    "ReviewPolicy",
    "RubricVersion",
    "Run",
    "SourceDocument",
    "StageClaim",
    "VersionFile",
    "Vote",
    "WeekSchedule",
]
