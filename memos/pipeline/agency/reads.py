"""What the agency's stages read of the run and its earlier stages, typed."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from agents.agency.config import AgencyConfig
from agents.agency.outputs import (
    InferenceOutput,
    MovesOutput,
    ProposalOutput,
    ProposedMove,
    SourcesOutput,
)
from memos.pipeline.agency.plan import F1, F2, INFERENCE, MOVES, PROPOSALS, SOURCES, SOURCES_KIND
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed


def config(ctx: StageContext) -> AgencyConfig:
    return AgencyConfig.model_validate(ctx.config)


def sources(ctx: StageContext) -> SourcesOutput:
    found = ctx.output(SOURCES, SOURCES_KIND, SourcesOutput)
    if found is None:
        raise StageFailed("layer 0 did not finish: no sources to work from")
    return found


@dataclass
class Findings:
    """F1 and F2 as the analysts read them, and every id a later turn may cite."""

    f1: InferenceOutput | None
    f2: InferenceOutput | None
    gathered: SourcesOutput

    @cached_property
    def claims(self) -> dict[str, str]:
        return {
            claim.claim_id: claim.statement
            for output in (self.f1, self.f2)
            if output is not None
            for claim in output.claims
        }

    @cached_property
    def fact_ids(self) -> tuple[str, ...]:
        return tuple(item.evidence_id for item in self.gathered.facts)

    @cached_property
    def citable(self) -> tuple[str, ...]:
        """What a move, a critique or an answer may cite: F1's and F2's claims, and the figures."""
        return (*self.claims, *self.fact_ids)

    def block(self) -> str:
        """F1 and F2 as a prompt lists them: each claim with its id, then each one's gaps."""
        lines = []
        for label, output in (("F1 (financial inference)", self.f1), ("F2 (trend and sentiment)", self.f2)):
            lines.append(f"{label}:")
            if output is None:
                lines.append("- (not available)")
                continue
            lines.extend(f"- {claim.claim_id}: {claim.statement}" for claim in output.claims)
            lines.extend(f"- gap: {gap}" for gap in output.gaps)
        return "\n".join(lines)


def _findings(ctx: StageContext) -> Findings:
    return Findings(
        ctx.output(INFERENCE, F1, InferenceOutput), ctx.output(INFERENCE, F2, InferenceOutput), sources(ctx)
    )


def findings(ctx: StageContext) -> Findings:
    """Read once per stage (the sandbox's hundreds of calls share it)."""
    return ctx.inputs(_findings)


def proposed(ctx: StageContext) -> dict[str, ProposedMove]:
    """Every move proposed, by id, in the order proposed."""
    found: dict[str, ProposedMove] = {}
    for output in ctx.outputs(PROPOSALS, ProposalOutput, kind="proposal").values():
        found.update({move.move_id: move for move in output.moves})
    return dict(sorted(found.items(), key=lambda item: int(item[0].lstrip("m"))))


def merged(ctx: StageContext) -> MovesOutput:
    found = ctx.output(PROPOSALS, MOVES, MovesOutput)
    if found is None:
        raise StageFailed("the moves were not merged: nothing to debate")
    return found
