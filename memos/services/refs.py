"""The facts and source documents a step document cites, resolved in two queries for its whole page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from pydantic import BaseModel

from agents.evidence import document_tier, fact_tier
from agents.text.figures import fact_ids_in
from memos.models import FactRecord, SourceDocument

# Longest id we bother looking up: anything longer in an output is prose, not an evidence id.
MAX_ID_CHARS = 120


@dataclass(frozen=True)
class Refs:
    """The facts and documents a document's ids resolve to. ``known`` is what prose may reference: the
    facts the run was given as evidence (the same set the memo stage counted removed numbers against)."""

    facts: Mapping[str, FactRecord]
    documents: Mapping[str, SourceDocument]
    known: frozenset[str]
    # References prose may make that are not figures: labels code gave to findings ("[[F1.2]]" in a debate
    # turn), shown as the label with the finding's words on hover.
    labels: Mapping[str, str] = field(default_factory=dict)

    def with_labels(self, labels: Mapping[str, str]) -> Refs:
        return replace(self, labels={**self.labels, **labels})

    def tier(self, evidence_id: str) -> str:
        if (fact := self.facts.get(evidence_id)) is not None:
            return fact_tier(fact.source)
        if (document := self.documents.get(evidence_id)) is not None:
            return document_tier(document.kind)
        return ""


NO_REFS = Refs({}, {}, frozenset())


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def cited_ids(output: BaseModel) -> set[str]:
    """Every string of a typed output that could be an evidence id, and every ``[[fact id]]`` in its prose."""
    found: set[str] = set()
    for text in _strings(output.model_dump(mode="json")):
        if len(text) <= MAX_ID_CHARS and " " not in text:
            found.add(text)
        found.update(fact_ids_in(text))
    return found


def resolve(ids: set[str], evidence_ids: set[str]) -> Refs:
    facts = {fact.fact_id: fact for fact in FactRecord.objects.filter(fact_id__in=ids)}
    documents = {doc.doc_id: doc for doc in SourceDocument.objects.filter(doc_id__in=ids)}
    return Refs(facts, documents, frozenset(fact_id for fact_id in facts if fact_id in evidence_ids))
