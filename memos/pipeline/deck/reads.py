"""What the deck stages read of their run: its config, rubrics, scope, figures, and the brief's own numbers
and language."""

from __future__ import annotations

from agents.deck.outputs import DeckEvidence, ScopeOutput
from agents.deck.profile import DeckConfig
from agents.deck.resolve import DeckFrame
from agents.deck.spec import Figure
from agents.llm.types import CallContext
from agents.rubrics import DECK_R1, DECK_R2, Rubric
from memos.pipeline.context import StageContext
from memos.pipeline.deck.plan import DATA, FIGURES, SCOPE
from memos.pipeline.errors import StageFailed
from memos.pipeline.inputs import brief_block, kept_numbers, language
from memos.pipeline.prompts import rubric

__all__ = ["brief_block", "kept_numbers", "language"]


def config(ctx: StageContext) -> DeckConfig:
    return DeckConfig.model_validate(ctx.config)


def r1(ctx: StageContext) -> Rubric:
    return rubric(DECK_R1, ctx.run)


def r2(ctx: StageContext) -> Rubric:
    return rubric(DECK_R2, ctx.run)


def scope_output(ctx: StageContext) -> ScopeOutput:
    found = ctx.output(SCOPE, SCOPE, ScopeOutput)
    if found is None:
        raise StageFailed("the scope step did not finish")
    return found


def evidence(ctx: StageContext) -> DeckEvidence:
    found = ctx.output(DATA, FIGURES, DeckEvidence)
    if found is None:
        raise StageFailed("the figures step did not finish")
    return found


def figures(ctx: StageContext) -> dict[str, Figure]:
    return {figure.fact_id: figure for figure in evidence(ctx).figures}


def frame(ctx: StageContext) -> DeckFrame:
    company, brief = ctx.run.brief.company, ctx.run.brief
    as_of = evidence(ctx).as_of
    return DeckFrame(
        company=company.name,
        ticker=company.ticker,
        subtitle=f"For {brief.audience}" + (f" · data as of {as_of}" if as_of else ""),
    )


def call(ctx: StageContext, stage: str, role: str) -> CallContext:
    return CallContext(run_id=ctx.run_id, stage=stage, role=role)


def figure_lines(found: dict[str, Figure]) -> str:
    return "\n".join(
        f"- {f.fact_id}: {f.label} {f.period} = {f.display} ({f.source})" for f in found.values()
    )
