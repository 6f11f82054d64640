"""Stage 4, evaluation: a separate model grades every iteration; code turns its grades into the verdict.
Where a second evaluator is configured on another model (``LLM_MODEL_SECOND_EVALUATOR``), both grade at once
and code keeps the more conservative verdict, listing where they disagree (agents.memo.opinions); a second
evaluator that fails leaves the first's verdict standing, and the step says so.

Code checks every passage the evaluator quotes against what it was shown (``agents.memo.quotes``): a score
resting on a quote that is not there does not count. A run is not lost to an evaluator that fumbles: when
its answer never fits the schema (after the gateway's larger-budget retry and its one re-ask), when the
provider refuses the request, or when the endpoint still times out on the stage's last attempt, the step is
recorded failed with the reason and the run goes on to deliver the memo marked "not evaluated" (it cannot
be voted on or published until an evaluation succeeds; the run page offers to re-run this stage alone,
memos.pipeline.memo.desk.rerun). A spent budget or a refused endpoint still ends the run, as everywhere.
"""

from __future__ import annotations

import json
import threading

from agents.llm.errors import InvalidOutput, LLMError, ProviderFailure, TransientFailure
from agents.llm.prompts import PromptTemplate
from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.memo.opinions import Opinion, conservative, disagreements
from agents.memo.outputs import EvaluationOutput, SelfScore
from agents.memo.quotes import check as check_quotes
from agents.memo.quotes import iteration_texts
from agents.memo.rubric import MEMO_RUBRIC, MemoRubric, anchors_text
from agents.memo.schemas import Evaluation, SynthesisIteration
from agents.memo.thesis import thesis_faults
from agents.memo.verdict import decide
from agents.text.sentences import trim_cut
from memos.models import AgentStep, Run
from memos.pipeline import fanout
from memos.pipeline.claims import max_attempts
from memos.pipeline.context import StageContext
from memos.pipeline.errors import shown
from memos.pipeline.gateway import gateway, llm_settings, second_evaluator
from memos.pipeline.inputs import brief_block
from memos.pipeline.judge_families import badges
from memos.pipeline.memo.breadths import EVALUATORS
from memos.pipeline.memo.memo import DRAFT, memo_draft
from memos.pipeline.memo.plan import EVALUATION
from memos.pipeline.memo.reads import (
    audit_output,
    briefs_text,
    catalog_of,
    config,
    evidence,
    iterations,
    specialist_outputs,
)
from memos.pipeline.prompts import rubric, template


def run_evaluation(ctx: StageContext) -> None:
    step = ctx.step(EVALUATION)
    if step.status == AgentStep.Status.DONE:
        return
    ctx.start(step)
    done = iterations(ctx)
    company = ctx.company
    briefs = briefs_text(specialist_outputs(ctx), audit_output(ctx))
    # A re-run of this stage (memos.pipeline.memo.desk.rerun) is a new request, not the one that failed.
    request = str(config(ctx).evaluation_reruns + 1)
    memo_rubric = MemoRubric(rubric(MEMO_RUBRIC, ctx.run))
    evaluator = template("evaluator", ctx.run)
    prompt = evaluator.render(
        {"company": company.name, "ticker": company.ticker, "request": request} | anchors(evaluator, ctx.run),
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
    roles = [Role.EVALUATOR] + ([Role.SECOND_EVALUATOR] if second_evaluator() is not None else [])
    sent = {role: threading.Event() for role in roles}
    asked = {
        role: (
            lambda role=role: gateway().complete(
                prompt,
                Evaluation,
                context=CallContext(run_id=ctx.run_id, stage=EVALUATION, role=role),
                sent=sent[role],
            )
        )
        for role in roles
    }
    results: dict[Role, Evaluation | LLMError] = {}
    graded = fanout.in_parallel(asked.items(), limit=len(roles), breadth=EVALUATORS)
    # The memo stage's draft reads nothing of the verdict: made while the evaluators are asked, it is off the
    # run's path (its re-asks, when the writer's prose needs them, run beside the evaluators' calls).
    ctx.prepare_next(DRAFT, lambda: memo_draft(ctx), after=sent.values())
    # Code's reading of the final memo needs nothing of the grades: read while they are asked, too.
    faults = thesis_faults(done[-1].memo, catalog_of(evidence(ctx)))
    for role, future in graded:
        try:
            results[role] = future.result()
        except (InvalidOutput, ProviderFailure, TransientFailure) as exc:  # anything else ends the run
            results[role] = exc
    judged = [text for it in done for text in iteration_texts(it)] + [briefs]
    penalties = audit_output(ctx).penalties  # unsupported names and invented facts count against it
    opinions = [
        _opinion(role, answer, done, judged, memo_rubric, (penalties, faults))
        for role, answer in sorted(results.items())
        if isinstance(answer, Evaluation)
    ]
    failed = {role: exc for role, exc in results.items() if isinstance(exc, LLMError)}
    if not opinions:
        failure = failed[Role.EVALUATOR]
        if isinstance(failure, TransientFailure):
            if ctx.hold.attempt < max_attempts():
                raise failure  # the endpoint may answer later: the engine resumes this stage (bounded)
            ctx.fail_step(
                step, f"The evaluation failed: the evaluator's endpoint did not answer ({failure})."
            )
        else:
            ctx.fail_step(step, f"The evaluation failed: {shown(failure)}.")
        return
    trimmed = opinions[0][1]
    first = opinions[0][0]
    other = opinions[1][0] if len(opinions) > 1 else None
    # With one evaluator failed, the other's verdict stands alone, and the page says why.
    other_error = " ".join(
        f"The {_ordinal(role)} evaluator gave no verdict: {shown(exc)}." for role, exc in failed.items()
    )
    kept, other = conservative(first, other) if other is not None else (first, None)
    ctx.finish(
        step,
        EvaluationOutput(
            evaluation=kept.evaluation,
            verdict=kept.verdict,
            self_scores=[
                SelfScore(iteration=n, jplus=it.self_jplus, jminus=it.self_jminus)
                for n, it in enumerate(done, 1)
            ],
            same_model_warning=" ".join(badges(ctx.run.verdict_families, role=Role.EVALUATOR)),
            quotes=kept.quotes,
            trimmed=trimmed,
            kept_role=kept.role,
            other=other,
            disagreements=disagreements(kept, other) if other is not None else [],
            other_error=other_error,
        ),
    )


def anchors(evaluator: PromptTemplate, run: Run) -> dict[str, str]:
    """The evaluator's ``{anchors}``: each level's quoted example from the rubric version the run pinned (an
    admin's new version changes what the evaluator compares a memo with; an evaluator version pinned before
    it read them holds them as text)."""
    if "anchors" not in evaluator.placeholders:
        return {}
    return {"anchors": anchors_text(MemoRubric(rubric(MEMO_RUBRIC, run)).rubric)}


def _ordinal(role: Role) -> str:
    return "second" if role == Role.SECOND_EVALUATOR else "first"


def _opinion(  # noqa: PLR0917  (one call site, every argument the verdict needs)
    role: Role,
    answer: Evaluation,
    done: list[SynthesisIteration],
    judged: list[str],
    memo_rubric: MemoRubric,
    found: tuple[int, list[str]],
) -> tuple[Opinion, list[str]]:
    """One evaluator's answer as code reads it: cut back to whole sentences, its quotes checked against what
    it was shown, its verdict drawn by the same code for either evaluator, with what code found (the audit's
    penalties, the thesis' faults)."""
    evaluation, trimmed = trim_cut(answer)
    quotes = check_quotes(evaluation, judged)
    penalties, faults = found
    verdict = decide(done, evaluation, quotes, rubric=memo_rubric, penalties=penalties, faults=faults)
    model = llm_settings().endpoint_for(role).model
    return Opinion(role=role, model=model, evaluation=evaluation, verdict=verdict, quotes=quotes), trimmed
