"""Stage 4, evaluation: a separate model grades every iteration; code turns its grades into the verdict."""

from __future__ import annotations

import json

from agents.llm.types import CallContext
from agents.memo.outputs import EvaluationOutput, SelfScore
from agents.memo.schemas import Evaluation
from agents.memo.verdict import decide
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway, same_model_warning
from memos.pipeline.memo.plan import EVALUATION
from memos.pipeline.memo.reads import audit_output, brief_block, briefs_text, iterations, specialist_outputs
from memos.pipeline.prompts import template


def run_evaluation(ctx: StageContext) -> None:
    step = ctx.step(EVALUATION)
    if step.status == AgentStep.Status.DONE:
        return
    ctx.start(step)
    done = iterations(ctx)
    company = ctx.run.brief.company
    prompt = template("evaluator").render(
        {"company": company.name, "ticker": company.ticker},
        {
            "brief": brief_block(ctx),
            "briefs": briefs_text(specialist_outputs(ctx), audit_output(ctx)),
            "iterations": "\n\n".join(
                f"== Iteration {n}\n{json.dumps(it.model_dump(), indent=1)}" for n, it in enumerate(done, 1)
            ),
        },
        nonce=ctx.run.nonce,
    )
    ctx.check()
    context = CallContext(run_id=ctx.run_id, stage=EVALUATION, role="evaluator")
    evaluation = gateway().complete(prompt, Evaluation, context=context)
    ctx.finish(
        step,
        EvaluationOutput(
            evaluation=evaluation,
            verdict=decide(done, evaluation),
            self_scores=[
                SelfScore(iteration=n, jplus=it.self_jplus, jminus=it.self_jminus)
                for n, it in enumerate(done, 1)
            ],
            same_model_warning=same_model_warning(),
        ),
    )
