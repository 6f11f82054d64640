"""Stage 1, data: code gathers each specialist's evidence from the fact store and freezes it in the run."""

from __future__ import annotations

import hashlib
from datetime import date

from agents.evidence import EvidenceItem
from agents.memo.outputs import EvidenceOutput, EvidenceSelection
from memos.pipeline.company_facts import ensure_company_facts
from memos.pipeline.context import StageContext
from memos.pipeline.memo.evidence import current_evidence
from memos.pipeline.memo.plan import EVIDENCE
from memos.pipeline.memo.reads import config


def run_data(ctx: StageContext) -> None:
    company = ctx.company
    step = ctx.step(EVIDENCE)
    ctx.start(step)
    ensure_company_facts(ctx, step, company)
    by_specialist = current_evidence(company, config(ctx).roster)
    version = data_version(by_specialist)
    ctx.set_run(data_version=version)
    ctx.finish(
        step,
        EvidenceOutput(
            data_version=version,
            specialists={name: EvidenceSelection.of(items) for name, items in by_specialist.items()},
            as_of=as_of(by_specialist),
        ),
    )


def as_of(by_specialist: dict[str, list[EvidenceItem]]) -> date | None:
    """The newest day any of the evidence speaks for: the data's as-of date."""
    days = [item.as_of for items in by_specialist.values() for item in items if item.as_of is not None]
    return max(days, default=None)


def data_version(by_specialist: dict[str, list[EvidenceItem]]) -> str:
    digest = hashlib.sha256()
    for name in sorted(by_specialist):
        for item in by_specialist[name]:
            digest.update(f"{name}|{item.evidence_id}|{item.value}|{item.text}\n".encode())
    return digest.hexdigest()
