"""Stage 2, specialists: a parallel fan-out, generate-only; each writes its own brief from its own evidence.

Calls run on a thread pool under the configured bound; each result is stored as soon as it arrives, so a
killed worker loses at most the calls in flight, and those were not paid twice: the ledger answers every
call that had completed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.memo.citations import check_claims, unresolved_citations
from agents.memo.narrowing import as_base, brief_schema
from agents.memo.outputs import SpecialistOutput
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import SpecialistBrief
from agents.text.sentences import trim_cut
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.evidence import document_block, fact_lines
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block
from memos.pipeline.memo.breadths import SPECIALIST_BRIEFS
from memos.pipeline.memo.plan import SPECIALISTS_STAGE
from memos.pipeline.memo.reads import catalog_of, config, evidence
from memos.pipeline.prompts import template


def run_specialists(ctx: StageContext) -> None:
    by_specialist = evidence(ctx)
    catalog = catalog_of(by_specialist)
    gw = gateway()
    work: dict[str, Callable[[], SpecialistOutput]] = {
        # A specialist without evidence has nothing to ask a model about: silence beats filler.
        name: partial(ask_specialist, gw, ctx, name, items, catalog)
        if (items := by_specialist.get(name))
        else partial(silent_brief, ctx, name)
        for name in config(ctx).roster
    }
    if not ctx.fan_out(work, SpecialistOutput, limit=gw.settings.max_concurrency, breadth=SPECIALIST_BRIEFS):
        raise StageFailed("no specialist produced a usable brief; see each specialist's error")


def silent_brief(ctx: StageContext, name: str) -> SpecialistOutput:
    spec = SPECIALISTS[name]
    brief = SpecialistBrief(
        claims=[],
        coverage_gaps=[f"No evidence in the data for {spec.scope} on {ctx.company.ticker}."],
        undercurrents=[],
        evidence_quality="none",
    )
    return SpecialistOutput(brief=brief, claims=[], dropped=[], reasked=False, asked_model=False)


def ask_specialist(
    gw: LLMGateway, ctx: StageContext, name: str, items: list[EvidenceItem], catalog: EvidenceCatalog
) -> SpecialistOutput:
    company = ctx.company
    values = {"company": company.name, "ticker": company.ticker, "facts": fact_lines(items)}
    untrusted = {"brief": brief_block(ctx), "documents": document_block(items)}
    schema = brief_schema(
        name,
        tuple(item.evidence_id for item in items),
        config(ctx).max_claims,
        facts=tuple(item.evidence_id for item in items if item.kind == "fact"),
    )
    context = CallContext(run_id=ctx.run_id, stage=SPECIALISTS_STAGE, role=name)

    def ask(correction: str) -> SpecialistBrief:
        ctx.check()  # no new call for a stage this worker no longer holds
        prompt = template(f"specialist_{name}", ctx.run).render(
            values | {"correction": correction}, untrusted, nonce=ctx.run.nonce
        )
        answer: SpecialistBrief = as_base(gw.complete(prompt, schema, context=context), SpecialistBrief)
        return answer

    brief = ask("")
    unresolved = unresolved_citations(brief, catalog)
    if unresolved:  # one re-ask naming the ids that do not exist, then unresolved claims are dropped
        brief = ask(
            "Your previous answer cited ids that do not exist: "
            + ", ".join(unresolved)
            + ". Cite only ids that appear in the lists above."
        )
    brief, trimmed = trim_cut(brief)
    kept, dropped = check_claims(name, brief, catalog)
    return SpecialistOutput(
        brief=brief,
        claims=kept,
        dropped=dropped,
        reasked=bool(unresolved),
        asked_model=True,
        trimmed=trimmed,
    )
