"""Each workflow's step documents as pages show them: a context builder per kind of step, and the evidence
its runs were given (the only ids its documents may resolve). The run views look them up by the run's
workflow and know nothing of any one workflow."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memos.models import AgentStep, Run
from memos.views import agency_documents, deck_documents, memo_documents
from memos.views.refs import Refs

Builder = Callable[[Any, AgentStep, Refs], dict[str, Any]]
# A document that grows while its step runs (a debate's threads, turn by turn): the step, the ids it cites,
# and the context built once those are resolved.
Growing = Callable[[AgentStep], tuple[set[str], Callable[[Refs], dict[str, Any]]]]


@dataclass(frozen=True)
class WorkflowDocuments:
    builders: Mapping[str, Builder]
    evidence_ids: Callable[[Run], set[str]]
    growing: Mapping[str, Growing] = field(default_factory=dict)


DOCUMENTS: dict[str, WorkflowDocuments] = {
    Run.Workflow.MEMO: WorkflowDocuments(memo_documents.BUILDERS, memo_documents.evidence_ids),
    Run.Workflow.DECK: WorkflowDocuments(deck_documents.BUILDERS, deck_documents.evidence_ids),
    Run.Workflow.AGENCY: WorkflowDocuments(
        agency_documents.BUILDERS, agency_documents.evidence_ids, agency_documents.GROWING
    ),
}
