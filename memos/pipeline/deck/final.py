"""Stage 5, the deck: code takes the best-so-far (or, escalated, the draft that came closest), and the
run's ending and frozen version are built from it: the deck spec as JSON, each slide's text, the R1 and R2
scores and the changelog of accepted and rejected laps (seed 001 section 7)."""

from __future__ import annotations

from agents.deck.gates import stop_reason
from agents.deck.humanizer import OTHER_SCRIPT
from agents.deck.outline import slide_outline
from agents.deck.outputs import BaselineOutput, DeckOutput, DraftOutput, LapOutput
from agents.deck.slips import withhold_slips
from memos.models import Run
from memos.pipeline.context import StageContext
from memos.pipeline.deck.cycle import base_output
from memos.pipeline.deck.inputs import inputs
from memos.pipeline.deck.loop_state import LoopState, accepted_draft, best_failed_draft
from memos.pipeline.deck.plan import BASELINE, DECK, DRAFT, LAP, REFINE
from memos.pipeline.deck.refine import over_budget
from memos.pipeline.errors import StageFailed
from memos.pipeline.workflows import Artefact, Ending

KIND = "deck"


def run_deck(ctx: StageContext) -> None:
    ctx.once(DECK, DeckOutput, lambda: deck_output(ctx))


def deck_output(ctx: StageContext) -> DeckOutput:
    """The deck to deliver, without the sentences that slipped into another script than the brief's: no lap
    is left to fix them (agents.deck.slips)."""
    output = _best_output(ctx)
    deck, withheld = withhold_slips(output.deck, inputs(ctx).language)
    if not withheld:
        return output
    # What was withheld is no finding of the delivered deck (a later cycle starts from these findings).
    findings = [finding for finding in output.findings if finding.rule != OTHER_SCRIPT]
    return output.model_copy(update={"deck": deck, "withheld": withheld, "findings": findings})


def _best_output(ctx: StageContext) -> DeckOutput:
    drafts = list(ctx.outputs(DRAFT, DraftOutput).values())
    accepted = accepted_draft(drafts)
    base = base_output(ctx)
    if accepted is None and base is None:
        closest = best_failed_draft(drafts)
        if closest is None:
            raise StageFailed("no draft finished: there is no deck to deliver")
        return DeckOutput(deck=closest.candidate.deck, escalated=True, r1=closest.r1)
    baseline = ctx.output(REFINE, BASELINE, BaselineOutput)
    if baseline is None:
        raise StageFailed("the loop's baseline did not finish")
    state = LoopState.start(baseline, inputs(ctx).figures)
    for lap in ctx.outputs(REFINE, LapOutput, kind=LAP).values():
        state.add(lap)
    laps = inputs(ctx).config.max_laps
    r1 = accepted.r1 if accepted is not None else base.r1 if base is not None else None
    if r1 is None:
        raise StageFailed("no R1 verdict to carry")
    return DeckOutput(
        deck=state.best.deck,
        escalated=False,
        r1=r1,
        r2=state.best.scored,
        epoch=baseline.epoch,
        stop=state.stopped
        or over_budget(ctx)
        or stop_reason(
            inputs(ctx).r2, state.best.scored.composite, state.without_accept, state.laps_done, laps
        ),
        changelog=state.changelog,
        laps=state.laps_done,
        judgement=state.best.judgement,
        findings=state.best.findings,
        base_version=inputs(ctx).config.base_version,
        unchanged=baseline.carried and state.best.lap == 0,
    )


def final(ctx: StageContext) -> DeckOutput:
    output = ctx.output(DECK, DECK, DeckOutput)
    if output is None:
        raise StageFailed("the deck step did not finish")
    return output


STOPS = {
    "ship": "reached the ship bar",
    "plateau": "plateaued",
    "max_laps": "used every lap",
    "budget": "stopped at the cycle's token budget",
    "": "no lap run",
}


def ending(ctx: StageContext) -> Ending:
    output = final(ctx)
    if output.escalated:
        return Ending(
            Run.Status.NEEDS_REVIEW,
            f"escalated: can't clear the entry bar (R1 composite {output.r1.composite:.2f} of "
            f"{output.r1.entry_bar:.2f} needed, or a hard gate failed). "
            "The closest draft is kept for a person.",
        )
    r2 = output.r2.composite if output.r2 is not None else 0.0
    accepted = sum(1 for entry in output.changelog if entry.accepted)
    if output.unchanged:
        return Ending(
            Run.Status.DONE,
            f"refinement cycle: nothing new to freeze; the deck stays at R2 {r2:.2f} "
            f"({STOPS[output.stop]}, {output.laps} laps, same data and rubric)",
        )
    return Ending(
        Run.Status.DONE,
        f"deck ready: R2 {r2:.2f} after {output.laps} laps ({accepted} accepted); "
        f"the loop {STOPS[output.stop]}",
    )


def deck_artefact(ctx: StageContext) -> Artefact | None:
    output = final(ctx)
    if output.unchanged:
        return None  # the base version already is this deck, with these scores
    deck = output.deck
    scores: dict[str, object] = {
        "r1": output.r1.model_dump(mode="json"),
        "r2": output.r2.model_dump(mode="json") if output.r2 is not None else None,
        "epoch": output.epoch.model_dump(mode="json") if output.epoch is not None else None,
        "stop": output.stop,
        "escalated": output.escalated,
    }
    return Artefact(
        kind=KIND,
        title=f"{deck.ticker} deck: {deck.title}"[:300],
        content=output.model_dump(mode="json"),
        sections={f"Slide {slide.number}: {slide.section}": slide_outline(slide) for slide in deck.slides},
        evaluated=not output.escalated,
        score=output.r2.composite if output.r2 is not None else output.r1.composite,
        score_label="R2" if output.r2 is not None else "R1, escalated: can't clear the entry bar",
        scores=scores,
        cited=tuple(deck.figures()),
    )
