"""L4, the scorer: one judge call on a deck, for the R1 gate, an R2 lap, or T11's re-score of the best.

The judge sees the rubric's anchors, the brief-specific guidance (model-written, fenced), what code measured
and the deck; it returns integer scores with quotes and the ranked weak parts. Code checks each quote
against the deck and computes every composite (agents.deck.gates). An anchor adopted from a run's proposal
and not since saved by an admin (RubricVersion.model_written_anchors) is a model's words too: it goes to
the user message, fenced, and the rubric in the system message points to it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeVar

from pydantic import BaseModel

from agents.deck.gates import Measured
from agents.deck.narrowing import judgement_schema, quotable_lines
from agents.deck.outline import deck_lines, outline, quote_found
from agents.deck.outputs import QuoteCheck, ScopeOutput
from agents.deck.rubrics import PROPOSED_ANCHOR
from agents.deck.schemas import R1Judgement, R2Judgement
from agents.deck.spec import Deck
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.llm.types import RenderedPrompt
from agents.rubrics import Rubric
from memos.models import Run
from memos.pipeline.context import StageContext
from memos.pipeline.deck.inputs import inputs
from memos.pipeline.deck.scope import scope_text
from memos.pipeline.errors import StageFailed
from memos.pipeline.prompts import model_written_anchors, template

J = TypeVar("J", bound=BaseModel)
# The judge's prompts: the R1 gate, an R2 score, and T11's re-score of the unchanged best.
GATE, SCORER, RESCORE = "deck_gate", "deck_scorer", "deck_rescore"
# The judge's own R2 dimensions beyond the composite: the protected invariants it measures (seed 001 4a).
PROTECTED_ANCHORS = {
    "scope_adherence": "every required section present and on its purpose",
    "story_integrity": "the thesis through-line holds from the first slide to the recommendation",
    "visual_integrity": "no walls of text; every chart still carries its figures",
}


ADOPTED_IN_USER = "(model-written: see the adopted anchors)"


def dimensions_text(rubric: Rubric, *, protected: bool, model_written: Collection[str]) -> str:
    """The rubric for the system message: a model-written anchor is only pointed to (adopted_anchors_text)."""
    lines = []
    for dimension in rubric.objective("composite").dimensions:
        # Each level's descriptor with its quoted example (agents.rubrics.Dimension.anchor): the judge
        # compares the deck's words with the examples, not with adjectives alone.
        anchors = "; ".join(
            f"{score}: "
            + (ADOPTED_IN_USER if _adopted(dimension.key, score, model_written) else dimension.anchor(score))
            for score, _, _ in dimension.levels()
        )
        lines.append(f"- {dimension.key} (weight {dimension.weight:g}): {anchors}")
    if protected:
        lines += [f"- {key} (protected, not weighted): 5: {text}" for key, text in PROTECTED_ANCHORS.items()]
    return "\n".join(lines)


def adopted_anchors_text(rubric: Rubric, model_written: Collection[str]) -> str:
    """The model-written anchors, for the user message (fenced): "- key, 5: text" each."""
    lines = [
        f"- {dimension.key}, {score}: {text}"
        for dimension in rubric.objective("composite").dimensions
        for score, text in sorted(dimension.anchors.items())
        if _adopted(dimension.key, score, model_written)
    ]
    return "\n".join(lines) or "(none)"


def _adopted(key: str, score: int, model_written: Collection[str]) -> bool:
    return score == PROPOSED_ANCHOR and key in model_written


def measured_text(measured: Measured) -> str:
    return (
        f"{measured.figures} figures, {measured.mismatches} fact-check mismatches; "
        f"{len(measured.missing_sections)} required sections missing; "
        f"{len(measured.broken)} broken-slide findings, {measured.walls_of_text} walls of text, "
        f"{measured.humanizer} AI-style tells"
    )


def _ask(  # noqa: PLR0917 - one call, its pieces named at every call site
    ctx: StageContext,
    gw: LLMGateway,
    name: str,
    rubric: Rubric,
    deck: Deck,
    measured: Measured,
    output: type[J],
    stage: str,
    extra: dict[str, str] | None = None,
) -> J:
    scope = inputs(ctx).scope
    ctx.check()
    prompt = judge_prompt(
        name,
        ctx.run,
        rubric,
        deck,
        measured,
        scope,
        protected=output is R2Judgement,
        model_written=model_written_anchors(rubric.name, ctx.run.rubric_versions),
        extra=extra,
    )
    # The evidence a score may give is a line of the deck, verbatim: a small judge otherwise describes the
    # deck in its own words, and code caps every score whose quote it cannot find.
    schema = judgement_schema(output is R2Judgement, quotable_lines(deck_lines(deck)))
    answer = gw.complete(prompt, schema, context=inputs(ctx).call(stage, Role.SCORER))
    return output.model_validate(answer.model_dump())


def judge_prompt(  # noqa: PLR0917 - the judge's inputs, each named at every call site
    name: str,
    run: Run,
    rubric: Rubric,
    deck: Deck,
    measured: Measured,
    scope: ScopeOutput,
    *,
    protected: bool,
    model_written: Collection[str],
    extra: dict[str, str] | None = None,
) -> RenderedPrompt:
    """The judge's prompt as the loop renders it; memos.pipeline.deck.desk.calibration renders the same one
    for a frozen deck, so a calibration measures the judge the loop uses. ``model_written``: the dimensions
    whose anchor at 5 the rubric's version marks as a model's words (fenced, never in the system message)."""
    company = run.brief.company
    if company is None:
        raise StageFailed("a deck is about a company; this brief is a watchlist")
    proposal = scope.proposal
    guidance = "\n".join(f"- {d.dimension}: {d.five}" for d in proposal.descriptors) if proposal else "(none)"
    return template(name, run).render(
        {
            "company": company.name,
            "ticker": company.ticker,
            "rubric": rubric.title,
            "dimensions": dimensions_text(rubric, protected=protected, model_written=model_written),
            "measured": measured_text(measured),
            **(extra or {}),
        },
        {
            "guidance": guidance,
            "scope": scope_text(scope.scope),
            "deck": outline(deck),
            "adopted_anchors": adopted_anchors_text(rubric, model_written),
        },
        nonce=run.nonce,
    )


def judge_r1(ctx: StageContext, gw: LLMGateway, deck: Deck, measured: Measured, stage: str) -> R1Judgement:
    return _ask(ctx, gw, GATE, inputs(ctx).r1, deck, measured, R1Judgement, stage)


def judge_r2(
    ctx: StageContext, gw: LLMGateway, deck: Deck, measured: Measured, stage: str, *, rescore_lap: int = 0
) -> R2Judgement:
    if rescore_lap:
        return _ask(
            ctx,
            gw,
            RESCORE,
            inputs(ctx).r2,
            deck,
            measured,
            R2Judgement,
            stage,
            {"lap": str(rescore_lap)},
        )
    return _ask(ctx, gw, SCORER, inputs(ctx).r2, deck, measured, R2Judgement, stage)


def found_pairs(quotes: list[QuoteCheck]) -> list[tuple[str, bool]]:
    """(dimension, quote found) as the score ceilings read them (agents.deck.ceilings)."""
    return [(quote.dimension, quote.found) for quote in quotes]


def checked_quotes(judgement: R1Judgement | R2Judgement, deck: Deck) -> list[QuoteCheck]:
    return [
        QuoteCheck(dimension=score.dimension, quote=score.evidence, found=quote_found(score.evidence, deck))
        for score in judgement.scores
    ]
