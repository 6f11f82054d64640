"""Stage 3, synthesis: the fact-stability audit by code, then N iterations under the hill-climb rule.

The synthesizer has no tools and reads the specialists' briefs as model-written text. Each iteration answers
the previous one's what-I-missed list; an iteration whose self-scores fail the hill-climb rule is rewritten
with another aperture (bounded), and code, not the model, says whether it passed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.memo import hillclimb
from agents.memo.audit import AuditReport, audit
from agents.memo.citations import CheckedClaim, merge
from agents.memo.evidence import EvidenceCatalog
from agents.memo.narrowing import as_base, iteration_schema
from agents.memo.outputs import Attempt, AuditOutput, IterationOutput
from agents.memo.schemas import SynthesisIteration
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.gateway import gateway
from memos.pipeline.memo.plan import AUDIT, SYNTHESIS, iteration_key
from memos.pipeline.memo.reads import (
    brief_block,
    briefs_text,
    catalog_of,
    config,
    evidence,
    specialist_outputs,
)
from memos.pipeline.prompts import template


@dataclass(frozen=True)
class SynthesisInputs:
    """What every synthesis call of a run reads, built once per stage."""

    ctx: StageContext
    audit: AuditOutput
    cited: list[str]
    catalog: EvidenceCatalog
    total: int
    briefs: str  # the briefs as the synthesizer reads them, the same text for every iteration


def run_synthesis(ctx: StageContext) -> None:
    catalog = catalog_of(evidence(ctx))
    outputs = specialist_outputs(ctx)
    audit_step = ctx.step(AUDIT)
    if audit_step.status == AgentStep.Status.DONE:
        audited = AuditOutput.model_validate(audit_step.output)
    else:
        ctx.start(audit_step)
        audited = AuditOutput.of(*_audit([c for o in outputs.values() for c in o.claims], catalog))
        ctx.finish(audit_step, audited)
    cited = sorted({cid for claim in audited.claims for cid in claim.citations})
    if not cited:
        raise StageFailed("the specialists' briefs cite no evidence at all: there is nothing to synthesise")
    inputs = SynthesisInputs(
        ctx, audited, cited, catalog, config(ctx).iterations, briefs_text(outputs, audited)
    )
    previous: SynthesisIteration | None = None
    gw = gateway()
    for number in range(1, inputs.total + 1):
        step = ctx.step(iteration_key(number))
        if step.status == AgentStep.Status.DONE:
            done = IterationOutput.model_validate(step.output)
        else:
            ctx.start(step)
            done = iterate(gw, inputs, number, previous)
            ctx.finish(step, done)
        previous = done.final


def _audit(claims: list[CheckedClaim], catalog: EvidenceCatalog) -> tuple[list[CheckedClaim], AuditReport]:
    return audit([m.representative for m in merge(claims)], catalog)


def iterate(
    gw: LLMGateway, inputs: SynthesisInputs, number: int, previous: SynthesisIteration | None
) -> IterationOutput:
    """One iteration, rewritten with a changed aperture (bounded) when the hill-climb check fails."""
    attempts: list[Attempt] = []
    aperture = "" if previous is None else "Answer the previous iteration's what-I-missed list."
    baseline = None if previous is None else (previous.self_jplus, previous.self_jminus)
    for rewrite in range(hillclimb.MAX_REWRITES + 1):
        answer = _synthesise(gw, inputs, number, previous, aperture)
        check = hillclimb.check(number, answer.self_jplus, answer.self_jminus, baseline)
        attempts.append(Attempt(iteration=answer, hill_climb=check, aperture=aperture))
        if check.passed or rewrite == hillclimb.MAX_REWRITES:
            break
        aperture = (
            f"REWRITE: the previous draft of this iteration failed the hill-climb rule ({check.reason}). "
            f"Change the aperture: {hillclimb.aperture(rewrite)}."
        )
    final = attempts[-1]
    return IterationOutput(
        final=final.iteration, hill_climb=final.hill_climb, rewritten=len(attempts) > 1, attempts=attempts
    )


def _synthesise(
    gw: LLMGateway, inputs: SynthesisInputs, number: int, previous: SynthesisIteration | None, aperture: str
) -> SynthesisIteration:
    ctx, catalog = inputs.ctx, inputs.catalog
    company = ctx.run.brief.company
    cited = [item for cid in inputs.cited if (item := catalog.get(cid)) is not None]
    # Facts are described by code; a document's summary carries its title and source, which are not.
    facts = "\n".join(f"- {i.evidence_id} [{i.tier}] {i.summary}" for i in cited if i.kind == "fact")
    documents = "\n".join(f"- {i.evidence_id} [{i.tier}] {i.summary}" for i in cited if i.kind == "document")
    ctx.check()
    prompt = template("synthesizer").render(
        {
            "company": company.name,
            "ticker": company.ticker,
            "iteration": str(number),
            "iterations": str(inputs.total),
            "aperture": aperture,
            "evidence": facts or "(no figures cited)",
            "audit": _audit_text(inputs.audit),
        },
        {
            "brief": brief_block(ctx),
            "documents": documents or "(no documents cited)",
            "briefs": inputs.briefs,
            "previous": json.dumps(previous.model_dump(), indent=1)
            if previous
            else "(this is the first iteration)",
        },
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=SYNTHESIS, role="synthesizer")
    answer: SynthesisIteration = as_base(
        gw.complete(prompt, iteration_schema(tuple(inputs.cited)), context=context), SynthesisIteration
    )
    return answer


def _audit_text(report: AuditReport) -> str:
    if not report.contradictions:
        return "No contradictions between briefs on the cited figures."
    return "\n".join(f"- {c.kind}: {c.detail}" for c in report.contradictions)
