"""Stage 1, scope: L1 freezes the brief into a scope; L2 drafts brief-specific rubric anchors on top of the
governed R1/R2 (guidance for the judge until an admin adopts them; the weights stay the admin's)."""

from __future__ import annotations

from functools import partial

from agents.deck.narrowing import scope_schema
from agents.deck.outputs import ScopeOutput
from agents.deck.schemas import RubricProposal, Scope
from agents.llm.errors import BudgetExceeded, LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from memos.pipeline.context import StageContext
from memos.pipeline.deck.cycle import base_scope
from memos.pipeline.deck.inputs import inputs
from memos.pipeline.deck.plan import RUBRIC, SCOPE
from memos.pipeline.errors import shown
from memos.pipeline.gateway import gateway
from memos.pipeline.judge_families import badges
from memos.pipeline.prompts import model_written_anchors, template

ADOPTED_LEFT_OUT = "(adopted from an earlier run's proposal; model-written, not repeated here)"


def run_scope(ctx: StageContext) -> None:
    if inputs(ctx).config.base_version is not None:
        carry_scope(ctx)
        return
    gw = gateway()
    ctx.once(SCOPE, ScopeOutput, lambda: frozen_scope(ctx, gw))
    ctx.once(RUBRIC, ScopeOutput, lambda: proposed_anchors(ctx, gw))


def frozen_scope(ctx: StageContext, gw: LLMGateway) -> ScopeOutput:
    """L1: the brief frozen into the sections, questions and decision the deck must serve."""
    company = ctx.company
    ctx.check()
    prompt = template("deck_scope", ctx.run).render(
        {"company": company.name, "ticker": company.ticker},
        {"brief": inputs(ctx).brief},
        nonce=ctx.run.nonce,
    )
    schema = scope_schema(inputs(ctx).config.max_sections)
    answer = gw.complete(prompt, schema, context=inputs(ctx).call(SCOPE, Role.SCOPE_BUILDER))
    scope = Scope.model_validate(answer.model_dump())
    # Seed 001 rule 1, Reviewer != Reviser: the judge's family as the run recorded it when it started.
    return ScopeOutput(
        scope=scope, same_model_warning=" ".join(badges(ctx.run.verdict_families, role=Role.SCORER))
    )


def proposed_anchors(ctx: StageContext, gw: LLMGateway) -> ScopeOutput:
    """L2: brief-specific anchors on top of the governed rubrics. Guidance only: when they cannot be
    drafted, the deck goes on with the governed anchors and the step says why."""
    company = ctx.company
    frozen = inputs(ctx).scope
    try:
        ctx.check()
        prompt = template("deck_rubric", ctx.run).render(
            {"company": company.name, "ticker": company.ticker, "dimensions": anchors_at_five(ctx)},
            {"scope": scope_text(frozen.scope)},
            nonce=ctx.run.nonce,
        )
        proposal = gw.complete(prompt, RubricProposal, context=inputs(ctx).call(SCOPE, Role.RUBRIC_BUILDER))
    except BudgetExceeded:
        raise
    except LLMError as exc:
        return frozen.model_copy(update={"proposal_error": shown(exc)})
    return frozen.model_copy(update={"proposal": proposal})


def carry_scope(ctx: StageContext) -> None:
    """A refinement cycle keeps the scope and anchors its base version was built to: no LLM call."""
    for key in (SCOPE, RUBRIC):
        ctx.once(key, ScopeOutput, partial(base_scope, ctx, key))


def anchors_at_five(ctx: StageContext) -> str:
    """The governed anchors at 5, for the builder's system message: one a model wrote (adopted from an
    earlier run, not since saved by an admin) is left out, as the judge's system message leaves it out."""
    lines = []
    for rubric in (inputs(ctx).r1, inputs(ctx).r2):
        model_written = model_written_anchors(rubric.name, ctx.run.rubric_versions)
        for dimension in rubric.objective("composite").dimensions:
            anchor = ADOPTED_LEFT_OUT if dimension.key in model_written else dimension.anchors.get(5, "")
            lines.append(f"- {dimension.key}: {anchor}")
    return "\n".join(dict.fromkeys(lines))


def scope_text(scope: Scope) -> str:
    sections = "\n".join(f"- {s.name}: {s.purpose}" for s in scope.required_sections)
    questions = "\n".join(f"- {q}" for q in scope.key_questions)
    return (
        f"Audience: {scope.audience}\nDecision: {scope.decision}\n"
        f"Required sections:\n{sections}\nKey questions:\n{questions}"
    )
