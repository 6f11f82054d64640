"""Stage 2, specialists: a parallel fan-out, generate-only; each writes its own brief from its own evidence.

Calls run on a thread pool under the configured bound; each result is stored as soon as it arrives, so a
killed worker loses at most the calls in flight, and those were not paid twice: the ledger answers every
call that had completed.
"""

from __future__ import annotations

from agents.llm.errors import BudgetExceeded, LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.memo.citations import check_claims, unresolved_citations
from agents.memo.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.narrowing import as_base, brief_schema
from agents.memo.outputs import SpecialistOutput
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import SpecialistBrief
from agents.text.sentences import trim_cut
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed, shown
from memos.pipeline.evidence import document_block, fact_lines
from memos.pipeline.fanout import in_parallel
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block
from memos.pipeline.memo.plan import SPECIALISTS_STAGE
from memos.pipeline.memo.reads import catalog_of, config, evidence
from memos.pipeline.prompts import template


def run_specialists(ctx: StageContext) -> None:
    by_specialist = evidence(ctx)
    catalog = catalog_of(by_specialist)
    todo: list[tuple[AgentStep, list[EvidenceItem]]] = []
    silent: list[AgentStep] = []  # nothing to ask a model about
    for name in config(ctx).roster:
        step = ctx.step(name)
        if step.status == AgentStep.Status.DONE:
            continue
        if by_specialist.get(name):
            todo.append((step, by_specialist[name]))
        else:
            silent.append(step)
    _fan_out(ctx, todo, catalog, silent)
    if not ctx.any_done(SPECIALISTS_STAGE):
        raise StageFailed("no specialist produced a usable brief; see each specialist's error")


def silent_brief(ctx: StageContext, name: str) -> SpecialistOutput:
    spec = SPECIALISTS[name]
    brief = SpecialistBrief(
        claims=[],
        coverage_gaps=[f"No evidence in the data for {spec.scope} on {ctx.run.brief.company.ticker}."],
        undercurrents=[],
        evidence_quality="none",
    )
    return SpecialistOutput(brief=brief, claims=[], dropped=[], reasked=False, asked_model=False)


def _fan_out(
    ctx: StageContext,
    todo: list[tuple[AgentStep, list[EvidenceItem]]],
    catalog: EvidenceCatalog,
    silent: list[AgentStep],
) -> None:
    gw = gateway()
    tasks = [
        (step, lambda s=step, i=items: ask_specialist(gw, ctx, s.key, i, catalog)) for step, items in todo
    ]
    finished = in_parallel(tasks, limit=gw.settings.max_concurrency)
    for step, _ in todo:  # marked running while the calls are already in flight
        ctx.start(step)
    for step in silent:  # and the specialists without evidence finish meanwhile
        ctx.finish(step, silent_brief(ctx, step.key))
    spent: BudgetExceeded | None = None
    for step, future in finished:
        try:
            ctx.finish(step, future.result())
        except LLMError as exc:
            ctx.fail_step(step, f"{step.title}: {shown(exc)}")
            spent = exc if isinstance(exc, BudgetExceeded) else spent
    if spent is not None:
        raise spent  # the run is out of budget: it ends saying so, not as "no usable brief"


def ask_specialist(
    gw: LLMGateway, ctx: StageContext, name: str, items: list[EvidenceItem], catalog: EvidenceCatalog
) -> SpecialistOutput:
    company = ctx.run.brief.company
    values = {"company": company.name, "ticker": company.ticker, "facts": fact_lines(items)}
    untrusted = {"brief": brief_block(ctx), "documents": document_block(items)}
    schema = brief_schema(name, tuple(item.evidence_id for item in items), config(ctx).max_claims)
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
