"""Stage 5, memo: code applies the LOW-tier firewall to the final iteration, keeps the catalysts dated inside
the window, keeps the falsifier bindings the register can watch (agents.memo.falsifiers.check: the metric
has a fact for the company, the index names a falsifier), and lists the sentences it withholds for stating
figures no fact backs or for slipping into another script than the brief's.

When the evaluation failed, the memo is still delivered, marked not evaluated (``MemoOutput.evaluated`` is
False and ``not_evaluated`` says why): a later evaluation of the same run replaces it.
"""

from __future__ import annotations

from agents.memo import catalysts
from agents.memo import falsifiers as bindings
from agents.memo.audit import firewall
from agents.memo.outputs import EvaluationOutput, IterationOutput, MemoOutput, Withheld
from agents.memo.schemas import Analysis, MemoDraft
from agents.text.figures import removed_count, withheld_sentences
from agents.text.scripts import Language
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.inputs import kept_numbers, language
from memos.pipeline.memo.plan import EVALUATION, ITERATION, MEMO, SYNTHESIS
from memos.pipeline.memo.reads import audit_output, catalog_of, catalyst_window, evidence
from memos.pipeline.memo.watches import latest_readings


def run_memo(ctx: StageContext) -> None:
    ctx.once(MEMO, MemoOutput, lambda: delivered_memo(ctx))


def delivered_memo(ctx: StageContext) -> MemoOutput:
    """The last iteration's memo as a reader gets it: the firewall applied, every figure rendered by code,
    the falsifiers bound to their readings, the evaluator's verdict attached (or why there is none)."""
    catalog = catalog_of(evidence(ctx))
    done = list(ctx.outputs(SYNTHESIS, IterationOutput, kind=ITERATION).values())
    if not done:
        raise StageFailed("no synthesis iteration finished: there is no memo to deliver")
    final = done[-1].final
    evaluation = ctx.output(EVALUATION, EVALUATION, EvaluationOutput)
    not_evaluated = "" if evaluation is not None else _why_not_evaluated(ctx)
    fact_ids = frozenset(i for i, item in catalog.items.items() if item.kind == "fact")
    keep = kept_numbers(ctx)
    window = catalyst_window(ctx)
    memo, analysis = final.memo, final.analysis
    shown = catalysts.kept(memo, window)
    sections = _sections(memo, analysis, [c.event for c in shown])
    escape = done[-1].escape
    company = ctx.company
    bound = latest_readings(company, (binding.metric for binding in memo.falsifier_bindings))
    kept_bindings, dropped_bindings = bindings.check(memo, bound)
    return MemoOutput(
        memo=memo,
        analysis=analysis,
        firewall=firewall(memo, catalog, audit_output(ctx).report),
        verdict=evaluation.verdict if evaluation is not None else None,
        tiers={cid: catalog.items[cid].tier for cid in memo.load_bearing if cid in catalog.items},
        numbers_removed=sum(removed_count(text, fact_ids, keep) for _, texts in sections for text in texts),
        not_evaluated=not_evaluated,
        catalysts=shown,
        dropped_catalysts=catalysts.outside(memo, window),
        window=window,
        withheld=_withheld(sections, fact_ids, keep, language(ctx)),
        iterations=len(done),
        stopped_early=escape.reason if escape is not None and escape.stop else "",
        falsifier_bindings=kept_bindings,
        dropped_bindings=dropped_bindings,
    )


def _why_not_evaluated(ctx: StageContext) -> str:
    failed = (
        AgentStep.objects.filter(
            run_id=ctx.run.pk, stage=EVALUATION, key=EVALUATION, status=AgentStep.Status.FAILED
        )
        .values_list("error", flat=True)
        .first()
    )
    if failed is None:
        raise StageFailed("the evaluator's report is missing: the evaluation stage did not finish")
    return failed or "the evaluation failed"


def _sections(memo: MemoDraft, analysis: Analysis, events: list[str]) -> list[tuple[str, list[str]]]:
    """The memo's prose by the section a reader finds it in."""
    return [
        ("Headline thesis", [memo.headline_thesis]),
        ("Risk budget", [memo.risk_budget]),
        ("Sizing", [memo.sizing_rationale]),
        ("Catalysts", events),
        ("Falsifiers", list(memo.falsifiers)),
        ("Macro", [analysis.macro]),
        ("Meso", [analysis.meso]),
        ("Micro", [analysis.micro]),
    ]


def _withheld(
    sections: list[tuple[str, list[str]]], fact_ids: frozenset[str], keep: frozenset[str], said_in: Language
) -> list[Withheld]:
    out = []
    for title, texts in sections:
        found = [kinds for text in texts for kinds in withheld_sentences(text, fact_ids, keep, said_in)]
        if found:
            kinds = list(dict.fromkeys(kind for sentence in found for kind in sentence))
            out.append(Withheld(section=title, sentences=len(found), kinds=kinds))
    return out
