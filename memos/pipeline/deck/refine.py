"""Stage 4, the R2 refinement loop (seed 001 sections 4-5): baseline an epoch, then lap by lap: the planner's
work order (code's, while text in another script than the brief's is left on a slide: agents.deck.slips),
the reviser's change to the named slides only, render, fact-check, lint, the judge's scores and T11's
re-score of the unchanged best (the two judge calls in parallel), and code's accept-or-roll-back.

Each lap is one step, written when the lap ends; its LLM calls are in the ledger as they complete, so a lap
killed half-way is redone by the next worker without paying again for a call already answered.
"""

from __future__ import annotations

from agents.deck.assign import figures_of, latest_figures
from agents.deck.candidate import build
from agents.deck.gates import Decision, Measured, StopReason, decide, drifted, r2_scored, stop_reason
from agents.deck.narrowing import revision_schema
from agents.deck.outline import draft_of, outline, slide_outline
from agents.deck.outputs import BaselineOutput, DeckOutput, DraftOutput, Epoch, LapOutput
from agents.deck.resolve import SUMMARY_SECTION
from agents.deck.revise import apply_to_deck
from agents.deck.rubrics import DECK_R2
from agents.deck.schemas import R2Judgement, Revision, WorkOrder
from agents.deck.slips import slip_order, tell_order
from agents.deck.spec import Deck, Figure
from agents.llm.errors import BudgetExceeded, LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.text.sentences import trim_cut, within_bounds
from memos.models import AgentStep, Run
from memos.pipeline.context import StageContext
from memos.pipeline.deck.breadths import JUDGEMENTS
from memos.pipeline.deck.calibration import is_calibrated
from memos.pipeline.deck.cycle import base_output
from memos.pipeline.deck.data import data_version, deck_facts, figure_of
from memos.pipeline.deck.inputs import figure_lines, inputs
from memos.pipeline.deck.judging import checked_quotes, found_pairs, judge_r2
from memos.pipeline.deck.loop_state import Best, LoopState, accepted_draft
from memos.pipeline.deck.plan import BASELINE, DRAFT, REFINE, lap_key
from memos.pipeline.deck.settings import deck_settings
from memos.pipeline.errors import StageFailed, shown
from memos.pipeline.fanout import in_parallel
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import template
from memos.pipeline.skips import skip_steps

MAX_FINDINGS = 12  # the planner reads the first ones; a long list only costs prompt tokens


def run_refine(ctx: StageContext) -> None:
    gw = gateway()
    baseline = ctx.once(BASELINE, BaselineOutput, lambda: calibrated(make_baseline(ctx, gw), ctx))
    if baseline is None:
        return  # skipped: escalated at the gate
    state = LoopState.start(baseline, inputs(ctx).figures)
    laps = inputs(ctx).config.max_laps
    if deck_settings().require_calibration and not baseline.calibrated:
        # Seed 001: judge<->human agreement before the rubric drives the loop. The accepted draft is frozen.
        reason = (
            "not run: the R2 version is not calibrated against human gold scores (DECK_REQUIRE_CALIBRATION)"
        )
        skip_steps(ctx, REFINE, [lap_key(n) for n in range(1, laps + 1)], reason)
        return
    for number in range(1, laps + 1):
        step = ctx.step(lap_key(number))
        if step.status == AgentStep.Status.SKIPPED:
            return
        if step.status == AgentStep.Status.DONE:
            state.add(LapOutput.model_validate(step.output))
        else:
            stop = stop_reason(
                inputs(ctx).r2, state.best.scored.composite, state.without_accept, state.laps_done, laps
            )
            stop = stop or over_budget(ctx)
            if stop:
                state.stopped = stop
                break
            ctx.start(step)
            try:
                lap = run_lap(ctx, gw, state, number)
            except BudgetExceeded as exc:
                ctx.fail_step(step, f"stopped: {shown(exc)}")
                state.stopped = "budget"
                break
            ctx.finish(step, lap)
            state.add(lap)
        if state.stopped:
            break
    skip_steps(
        ctx,
        REFINE,
        [lap_key(n) for n in range(state.laps_done + 1, laps + 1)],
        f"not needed: the loop stopped ({state.stopped or 'max_laps'})",
    )


def calibrated(baseline: BaselineOutput, ctx: StageContext) -> BaselineOutput:
    """The baseline, saying whether the R2 version it was scored on passed its calibration (seed 001 §2)."""
    return baseline.model_copy(update={"calibrated": is_calibrated(DECK_R2, ctx.run.rubric_versions)})


def over_budget(ctx: StageContext) -> StopReason:
    budget = inputs(ctx).config.cycle_budget_tokens
    if budget is None:
        return ""
    spent = Run.objects.filter(pk=ctx.run.pk).values_list("tokens_spent", flat=True).first() or 0
    return "budget" if spent >= budget else ""


def current_epoch(ctx: StageContext) -> Epoch:
    pins = ctx.run.rubric_versions if isinstance(ctx.run.rubric_versions, dict) else {}
    pin = pins.get(DECK_R2, {})
    return Epoch(rubric_version=f"{DECK_R2} v{pin.get('version', 'file')}", data_version=ctx.run.data_version)


def make_baseline(ctx: StageContext, gw: LLMGateway) -> BaselineOutput:
    base = base_output(ctx)
    if base is not None:
        return cycle_baseline(ctx, gw, base)
    drafts = list(ctx.outputs(DRAFT, DraftOutput).values())
    accepted = accepted_draft(drafts)
    if accepted is None:
        raise StageFailed("no draft cleared the entry bar, so there is nothing to refine")
    deck, measured = accepted.candidate.deck, accepted.candidate.measured
    judgement = judge_r2(ctx, gw, deck, measured, REFINE)
    quotes = checked_quotes(judgement, deck)
    return BaselineOutput(
        epoch=current_epoch(ctx),
        deck=deck,
        scored=r2_scored(inputs(ctx).r2, judgement, measured, found_pairs(quotes)),
        judgement=judgement,
        quotes=quotes,
        findings=[*accepted.candidate.lint, *accepted.candidate.humanizer],
    )


def cycle_baseline(ctx: StageContext, gw: LLMGateway, base: DeckOutput) -> BaselineOutput:
    """Seed 001 section 5: within the base version's epoch its scores stand (no judge call); fresh data or a
    new rubric version opens a new epoch: the deck is redrawn from today's figures and scored again, and that
    score is the new baseline even when it is lower. Truth wins over a prettier score."""
    epoch = current_epoch(ctx)
    if base.epoch == epoch and base.r2 is not None and base.judgement is not None:
        return BaselineOutput(
            epoch=epoch,
            deck=base.deck,
            scored=base.r2,
            judgement=base.judgement,
            quotes=[],
            findings=base.findings,
            carried=True,
        )
    scope = inputs(ctx).scope.scope
    found = inputs(ctx)
    candidate = build(
        draft_of(base.deck), found.figures, found.frame, scope, keep=found.keep, language=found.language
    )
    judgement = judge_r2(ctx, gw, candidate.deck, candidate.measured, REFINE)
    quotes = checked_quotes(judgement, candidate.deck)
    return BaselineOutput(
        epoch=epoch,
        deck=candidate.deck,
        scored=r2_scored(inputs(ctx).r2, judgement, candidate.measured, found_pairs(quotes)),
        judgement=judgement,
        quotes=quotes,
        findings=[*candidate.lint, *candidate.humanizer],
        previous_epoch=base.epoch,
    )


def run_lap(ctx: StageContext, gw: LLMGateway, state: LoopState, number: int) -> LapOutput:
    rubric = inputs(ctx).r2
    best = state.best
    try:
        # Text in another script than the brief's is code's work order, before anything the planner picks.
        last = state.changelog[-1] if state.changelog else None
        order = (
            slip_order(best.findings) or tell_order(best.findings, last) or plan_lap(ctx, gw, state, number)
        )
    except LLMError as exc:
        if isinstance(exc, BudgetExceeded):
            raise
        return _no_candidate(number, None, state, f"the planner's answer failed: {shown(exc)}")
    if not any(slide.number in order.slides for slide in best.deck.drafted()):
        why = "the work order named only slides the desk's code writes (the title, risks and sources slides)"
        return _no_candidate(number, order, state, why)
    figures_now, fresh_version = state.figures, ""
    if order.action == "repull_analysis":
        figures_now, fresh_version = _repull(ctx, state)
    scope = inputs(ctx).scope.scope
    try:
        revision = revise(ctx, gw, state, order, figures_now)
    except LLMError as exc:
        if isinstance(exc, BudgetExceeded):
            raise
        return _no_candidate(number, order, state, f"the reviser's answer failed: {shown(exc)}")
    applied = apply_to_deck(
        best.deck, draft_of(best.deck), order, revision, max_slides=inputs(ctx).config.max_slides
    )
    found = inputs(ctx)
    candidate = build(
        applied.draft, figures_now, found.frame, scope, keep=found.keep, language=found.language
    )
    judged, rescored = _judge_both(ctx, gw, candidate.deck, candidate.measured, best, number=number)
    quotes = checked_quotes(judged, candidate.deck)
    scored = r2_scored(rubric, judged, candidate.measured, found_pairs(quotes))
    # The re-score goes through the same ceilings as the recorded one, so drift is the judge's alone.
    again = r2_scored(
        rubric, rescored, best.scored.measured, found_pairs(checked_quotes(rescored, best.deck))
    )
    drift = drifted(rubric, best.scored.scores, again.scores)
    decision = decide(rubric, scored, best.scored, drift=drift, new_epoch=bool(fresh_version))
    after = scored.composite if decision.accepted else best.scored.composite
    without = 0 if decision.accepted else state.without_accept + 1
    return LapOutput(
        lap=number,
        work_order=order,
        changed=applied.changed,
        ignored=applied.ignored,
        candidate=candidate,
        judgement=judged,
        quotes=quotes,
        scored=scored,
        rescored=again.scores,
        drift=drift,
        decision=decision,
        best=after,
        stop=stop_reason(rubric, after, without, number, inputs(ctx).config.max_laps),
        data_version=fresh_version,
        figures=list(figures_now.values()) if fresh_version else [],
        note=applied.note(revision.reason),
    )


def _no_candidate(number: int, order: WorkOrder | None, state: LoopState, error: str) -> LapOutput:
    return LapOutput(
        lap=number,
        work_order=order,
        changed=[],
        decision=Decision(accepted=False, reasons=[error], margin=0.0),
        best=state.best.scored.composite,
        error=error,
    )


def _judge_both(
    ctx: StageContext, gw: LLMGateway, deck: Deck, measured: Measured, best: Best, *, number: int
) -> tuple[R2Judgement, R2Judgement]:
    """The candidate's judgement and T11's re-score of the unchanged best: independent, so in parallel."""
    tasks = [
        ("candidate", lambda: judge_r2(ctx, gw, deck, measured, REFINE)),
        ("best", lambda: judge_r2(ctx, gw, best.deck, best.scored.measured, REFINE, rescore_lap=number)),
    ]
    results = {
        key: future.result()
        for key, future in in_parallel(tasks, limit=gw.settings.max_concurrency, breadth=JUDGEMENTS)
    }
    return results["candidate"], results["best"]


def plan_lap(ctx: StageContext, gw: LLMGateway, state: LoopState, number: int) -> WorkOrder:
    history = "\n".join(
        f"- lap {e.lap}: {e.action} on {e.target or '-'}: {'accepted' if e.accepted else 'rejected'}"
        f" ({'; '.join(e.reasons)[:160]})"
        for e in state.changelog
    )
    weakest = "\n".join(
        f"- slide {w.slide} ({w.dimension}): {w.problem}" for w in state.best.judgement.weakest
    )
    ctx.check()
    prompt = template("deck_planner", ctx.run).render(
        {"lap": str(number), "best": f"{state.best.scored.composite:.2f}", "history": history or "(none)"},
        {"findings": _findings(state), "weakest": weakest, "deck": outline(state.best.deck)},
        nonce=ctx.run.nonce,
    )
    return gw.complete(prompt, WorkOrder, context=inputs(ctx).call(REFINE, Role.PLANNER))


def _findings(state: LoopState, slides: tuple[int, ...] = ()) -> str:
    """Code's lint and humanizer findings on the best-so-far (on ``slides`` only, when given)."""
    chosen = [f for f in state.best.findings if not slides or f.slide in slides]
    lines = [f"- slide {f.slide} {f.shape}: {f.rule}: {f.message}" for f in chosen[:MAX_FINDINGS]]
    return "\n".join(lines) or "(none)"


def revise(
    ctx: StageContext, gw: LLMGateway, state: LoopState, order: WorkOrder, found: dict[str, Figure]
) -> Revision:
    deck = state.best.deck
    drafted = {slide.number: slide for slide in deck.drafted()}
    numbers = tuple(n for n in dict.fromkeys(order.slides) if n in drafted)
    sections = (SUMMARY_SECTION, *(section.name for section in inputs(ctx).body))
    # The named slides' own figures (agents.deck.assign). The summary's reasons are offered what the framing
    # was, each metric's latest year and quarter (agents.deck.assign.latest_figures): offered every figure of
    # the run (4,000 tokens and more), the embedded reviser's prompt outgrew its model's 8,192-token slot.
    named_sections = [drafted[n].section for n in numbers]
    own = inputs(ctx).plan.figures_for(named_sections)
    offered = figures_of(own, found) if own else found
    if SUMMARY_SECTION in named_sections:
        offered = latest_figures(found) | figures_of(own, found)
    schema = revision_schema(tuple(offered), sections, numbers)
    named = "\n".join(slide_outline(deck.slides[n - 1]) for n in numbers)
    ctx.check()
    prompt = template("deck_reviser", ctx.run).render(
        {"lap": str(state.laps_done + 1), "figures": figure_lines(offered)},
        {
            "sections": "\n".join(f"- {name}" for name in sections),
            "order": f"{order.action} on slides {', '.join(map(str, numbers))} to raise {order.target}: "
            f"{order.instruction}",
            "slides": named,
            "findings": _findings(state, numbers),
            "deck": outline(deck),
        },
        nonce=ctx.run.nonce,
    )
    answer, _ = trim_cut(gw.complete(prompt, schema, context=inputs(ctx).call(REFINE, Role.REVISER)))
    return Revision.model_validate(within_bounds(Revision, answer.model_dump()))


def _repull(ctx: StageContext, state: LoopState) -> tuple[dict[str, Figure], str]:
    """T1-T4 again: the fact store's figures now. A newer filing changes the data version: a new epoch."""
    fresh = [figure_of(fact, own=ctx.company.ticker) for fact in deck_facts(ctx.company)]
    version = data_version(fresh)
    if not fresh or version == state.data_version:
        return state.figures, ""
    return {figure.fact_id: figure for figure in fresh}, version
