"""Stage 3, draft and the R1 gate (seed 001 section 3): L3 drafts, code renders and measures, the judge
grades, code applies the hard gates and the entry bar. A failing draft is rebuilt, told what failed, up to the
rubric's ``max_rebuilds``; then the deck is escalated ("can't clear the entry bar") and the loop is skipped.
"""

from __future__ import annotations

from agents.deck.candidate import build
from agents.deck.gates import r1_result
from agents.deck.narrowing import draft_schema
from agents.deck.outputs import DraftOutput
from agents.deck.schemas import DeckDraft
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.deck.judging import checked_quotes, found_pairs, judge_r1
from memos.pipeline.deck.plan import BASELINE, DRAFT, REFINE, draft_key, lap_key
from memos.pipeline.deck.reads import (
    brief_block,
    call,
    config,
    figure_lines,
    figures,
    frame,
    kept_numbers,
    r1,
    scope_output,
)
from memos.pipeline.deck.scope import scope_text
from memos.pipeline.deck.skips import skip_steps
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import template


def run_draft(ctx: StageContext) -> None:
    attempts = config(ctx).max_rebuilds + 1
    base = config(ctx).base_version
    if base is not None:
        reason = "not needed: a refinement cycle continues from an accepted deck version"
        skip_steps(ctx, DRAFT, [draft_key(n) for n in range(1, attempts + 1)], reason)
        return
    gw = gateway()
    previous: DraftOutput | None = None
    for attempt in range(1, attempts + 1):
        step = ctx.step(draft_key(attempt))
        if step.status == AgentStep.Status.SKIPPED:
            return
        if step.status == AgentStep.Status.DONE:
            done = DraftOutput.model_validate(step.output)
        else:
            ctx.start(step)
            done = draft_once(ctx, gw, attempt, previous)
            ctx.finish(step, done)
        if done.r1.passed:
            skip_steps(
                ctx,
                DRAFT,
                [draft_key(n) for n in range(attempt + 1, attempts + 1)],
                "not needed: the draft cleared R1",
            )
            return
        previous = done
    # Every attempt failed the gate: escalate. The loop has nothing to refine.
    skip_steps(
        ctx,
        REFINE,
        [BASELINE, *(lap_key(n) for n in range(1, config(ctx).max_laps + 1))],
        "not run: no draft cleared the entry bar (escalated)",
    )


def draft_once(ctx: StageContext, gw: LLMGateway, attempt: int, previous: DraftOutput | None) -> DraftOutput:
    company = ctx.run.brief.company
    scope = scope_output(ctx).scope
    found = figures(ctx)
    sections = tuple(section.name for section in scope.required_sections)
    schema = draft_schema(tuple(found), sections, config(ctx).max_slides)
    ctx.check()
    prompt = template("deck_drafter", ctx.run).render(
        {
            "company": company.name,
            "ticker": company.ticker,
            "figures": figure_lines(found),
            "rebuild": rebuild_note(previous),
        },
        {"scope": scope_text(scope), "brief": brief_block(ctx)},
        nonce=ctx.run.nonce,
    )
    answer = gw.complete(prompt, schema, context=call(ctx, DRAFT, Role.DRAFTER))
    draft = DeckDraft.model_validate(answer.model_dump())
    candidate = build(draft, found, frame(ctx), scope, keep=kept_numbers(ctx))
    rubric = r1(ctx)
    # The judge is asked only when every hard gate passed: a deck failing one is rebuilt whatever its grade.
    hard = r1_result(rubric, candidate.measured, None)
    if not all(gate.passed for gate in hard.gates):
        return DraftOutput(attempt=attempt, candidate=candidate, r1=hard)
    judgement = judge_r1(ctx, gw, candidate.deck, candidate.measured, DRAFT)
    quotes = checked_quotes(judgement, candidate.deck)
    return DraftOutput(
        attempt=attempt,
        candidate=candidate,
        judgement=judgement,
        quotes=quotes,
        r1=r1_result(rubric, candidate.measured, judgement, found_pairs(quotes)),
    )


def rebuild_note(previous: DraftOutput | None) -> str:
    """What the drafter is told on a rebuild: code's reasons, and the judge's weakest parts (model-written,
    but they only describe the drafter's own deck)."""
    if previous is None:
        return "This is the first draft."
    lines = [f"Your previous draft (attempt {previous.attempt}) did not clear the entry bar:"]
    lines += [f"- {gate.key}: {gate.reason}" for gate in previous.r1.gates if not gate.passed]
    if previous.judgement is not None:
        lines.append(f"- graded composite {previous.r1.composite:.2f}, entry bar {previous.r1.entry_bar:.2f}")
        lines += [f"- slide {w.slide} ({w.dimension}): {w.problem}" for w in previous.judgement.weakest]
    if previous.candidate.withheld:
        lines.append("- sentences removed for typing numbers: " + ", ".join(previous.candidate.withheld[:5]))
    return "\n".join(lines)
