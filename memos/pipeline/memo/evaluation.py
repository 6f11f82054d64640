"""Stage 4, evaluation: a separate model grades every iteration; code turns its grades into the verdict.

Code checks every passage the evaluator quotes against what it was shown (``agents.memo.quotes``): a score
resting on a quote that is not there does not count. A run is not lost to an evaluator that fumbles: when
its answer never fits the schema (after the gateway's larger-budget retry and its one re-ask), when the
provider refuses the request, or when the endpoint still times out on the stage's last attempt, the step is
recorded failed with the reason and the run goes on to deliver the memo marked "not evaluated" (it cannot
be voted on or published until an evaluation succeeds; the run page offers to re-run this stage alone,
memos.services.rerun). A spent budget or a refused endpoint still ends the run, as everywhere.
"""

from __future__ import annotations

import json

from agents.llm.errors import InvalidOutput, ProviderFailure, TransientFailure
from agents.llm.types import CallContext
from agents.memo.outputs import EvaluationOutput, SelfScore
from agents.memo.quotes import check as check_quotes
from agents.memo.quotes import iteration_texts
from agents.memo.rubric import MEMO_RUBRIC, MemoRubric
from agents.memo.schemas import Evaluation
from agents.memo.verdict import decide
from agents.text.sentences import trim_cut
from memos.models import AgentStep
from memos.pipeline.claims import max_attempts
from memos.pipeline.context import StageContext
from memos.pipeline.errors import shown
from memos.pipeline.gateway import gateway, same_model_warning
from memos.pipeline.inputs import brief_block
from memos.pipeline.memo.plan import EVALUATION
from memos.pipeline.memo.reads import audit_output, briefs_text, config, iterations, specialist_outputs
from memos.pipeline.prompts import rubric, template


def run_evaluation(ctx: StageContext) -> None:
    step = ctx.step(EVALUATION)
    if step.status == AgentStep.Status.DONE:
        return
    ctx.start(step)
    done = iterations(ctx)
    company = ctx.company
    briefs = briefs_text(specialist_outputs(ctx), audit_output(ctx))
    # A re-run of this stage (memos.services.rerun) is a new request, not the one that failed.
    request = str(config(ctx).evaluation_reruns + 1)
    prompt = template("evaluator", ctx.run).render(
        {"company": company.name, "ticker": company.ticker, "request": request},
        {
            "brief": brief_block(ctx),
            "briefs": briefs,
            "iterations": "\n\n".join(
                f"== Iteration {n}\n{json.dumps(it.model_dump(), indent=1)}" for n, it in enumerate(done, 1)
            ),
        },
        nonce=ctx.run.nonce,
    )
    ctx.check()
    context = CallContext(run_id=ctx.run_id, stage=EVALUATION, role="evaluator")
    try:
        answer = gateway().complete(prompt, Evaluation, context=context)
    except (InvalidOutput, ProviderFailure) as exc:
        ctx.fail_step(step, f"The evaluation failed: {shown(exc)}.")
        return
    except TransientFailure as exc:
        if ctx.hold.attempt < max_attempts():
            raise  # the endpoint may answer later: the engine resumes this stage (bounded)
        ctx.fail_step(step, f"The evaluation failed: the evaluator's endpoint did not answer ({exc}).")
        return
    evaluation, trimmed = trim_cut(answer)
    quotes = check_quotes(evaluation, [text for it in done for text in iteration_texts(it)] + [briefs])
    ctx.finish(
        step,
        EvaluationOutput(
            evaluation=evaluation,
            verdict=decide(done, evaluation, quotes, rubric=MemoRubric(rubric(MEMO_RUBRIC, ctx.run))),
            self_scores=[
                SelfScore(iteration=n, jplus=it.self_jplus, jminus=it.self_jminus)
                for n, it in enumerate(done, 1)
            ],
            same_model_warning=same_model_warning(),
            quotes=quotes,
            trimmed=trimmed,
        ),
    )
