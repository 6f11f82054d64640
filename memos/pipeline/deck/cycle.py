"""A refinement cycle (seed 001, "G2 refinement cycle, up to 2x/day"): a deck run that continues from the
brief's latest deck version instead of drafting anew. Its scope and its accepted draft are that version's;
what the cycle reads of it is here."""

from __future__ import annotations

from agents.deck.outputs import DeckOutput, ScopeOutput
from memos.models import AgentStep, ArtefactVersion
from memos.pipeline.context import StageContext
from memos.pipeline.deck.inputs import inputs
from memos.pipeline.deck.plan import RUBRIC, SCOPE
from memos.pipeline.errors import StageFailed


def base_version(ctx: StageContext) -> ArtefactVersion | None:
    number = inputs(ctx).config.base_version
    if number is None:
        return None
    found = ArtefactVersion.objects.filter(pk=number, brief_id=ctx.run.brief_id, kind="deck").first()
    if found is None:
        raise StageFailed(f"the deck version this cycle continues from (id {number}) is not this brief's")
    return found


def base_output(ctx: StageContext) -> DeckOutput | None:
    version = base_version(ctx)
    return DeckOutput.model_validate(version.content) if version is not None else None


def base_scope(ctx: StageContext, key: str = SCOPE) -> ScopeOutput:
    """The scope (or the rubric builder's anchors) of the run that froze the base version: a cycle keeps the
    frozen brief it refines."""
    version = base_version(ctx)
    if version is None:
        raise StageFailed("not a refinement cycle")
    raw = (
        AgentStep.objects.filter(run_id=version.run_id, key=key, status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    if raw is None:
        raise StageFailed(f"the run that froze version {version.number} has no {key} to continue from")
    return ScopeOutput.model_validate(raw)


__all__ = ["RUBRIC", "base_output", "base_scope", "base_version"]
