"""The positions register as a version's page shows it: each watched falsifier with the facts its words
reference, so ``[[fact id]]`` in a falsifier renders as the fact's value and a figure the model typed is
withheld (memos.templatetags.desk.prose), as on the run's pages."""

from __future__ import annotations

from dataclasses import dataclass

from agents.text.figures import fact_ids_in
from memos.models import ArtefactVersion, FalsifierWatch
from memos.pipeline.memo.desk.falsifiers import watches_of
from memos.pipeline.memo.desk.pages import evidence_ids
from memos.services.refs import NO_REFS, Refs, resolve


@dataclass(frozen=True)
class RegisterRow:
    watch: FalsifierWatch
    refs: Refs


def register_rows(version: ArtefactVersion) -> list[RegisterRow]:
    watches = watches_of(version)
    ids = {fact_id for watch in watches for fact_id in fact_ids_in(watch.text)}
    refs = resolve(ids, evidence_ids(version.run)) if ids else NO_REFS
    return [RegisterRow(watch, refs) for watch in watches]
