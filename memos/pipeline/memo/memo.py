"""Stage 5, memo: code applies the LOW-tier firewall to the final iteration and counts removed numbers."""

from __future__ import annotations

from agents.memo.audit import firewall
from agents.memo.outputs import EvaluationOutput, MemoOutput
from agents.memo.textrefs import removed_count
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.memo.plan import EVALUATION, MEMO
from memos.pipeline.memo.reads import audit_output, catalog_of, evidence, iterations


def run_memo(ctx: StageContext) -> None:
    step = ctx.step(MEMO)
    if step.status == AgentStep.Status.DONE:
        return
    ctx.start(step)
    catalog = catalog_of(evidence(ctx))
    final = iterations(ctx)[-1]
    evaluation = ctx.output(EVALUATION, EVALUATION, EvaluationOutput)
    if evaluation is None:
        raise StageFailed("the evaluator's report is missing: the evaluation stage did not finish")
    fact_ids = frozenset(i for i, item in catalog.items.items() if item.kind == "fact")
    memo, analysis = final.memo, final.analysis
    prose = [memo.headline_thesis, memo.risk_budget, memo.sizing_rationale, *memo.falsifiers]
    prose += [c.event for c in memo.catalysts]
    prose += [analysis.macro, analysis.meso, analysis.micro]
    ctx.finish(
        step,
        MemoOutput(
            memo=memo,
            analysis=analysis,
            firewall=firewall(memo, catalog, audit_output(ctx).report),
            verdict=evaluation.verdict,
            tiers={cid: catalog.items[cid].tier for cid in memo.load_bearing if cid in catalog.items},
            numbers_removed=sum(removed_count(text, fact_ids) for text in prose),
        ),
    )
