"""What every debate of a run reads, from the run's rows alone: a worker that takes a move over (on this
machine or another) holds no stage context, only the run id."""

from __future__ import annotations

from dataclasses import dataclass

from agents.agency.config import AgencyConfig
from agents.agency.outputs import (
    InferenceOutput,
    MovesOutput,
    ProposalOutput,
    ProposedMove,
    SourcesOutput,
)
from agents.text.figures import brief_numbers
from agents.text.scripts import Language
from memos.models import AgentStep, Run
from memos.pipeline.agency.plan import (
    F1,
    F2,
    INFERENCE,
    MOVES,
    PROPOSAL,
    PROPOSALS,
    SOURCES,
    SOURCES_KIND,
)
from memos.pipeline.agency.reads import Findings
from memos.pipeline.errors import StageFailed
from memos.pipeline.language import brief_language


@dataclass(frozen=True)
class DebateInputs:
    run: Run
    agency: AgencyConfig
    found: Findings
    proposals: dict[str, ProposedMove]
    merged: MovesOutput
    keep: frozenset[str]  # numbers the analyst's brief contains: the brief's, not a model's
    language: Language | None = None  # the brief's: a turn that slips into another script is withheld

    @classmethod
    def of(cls, run: Run) -> DebateInputs:
        """Read in one query; a run whose earlier layers did not finish has nothing to debate."""
        done = AgentStep.objects.filter(
            run_id=run.pk, status=AgentStep.Status.DONE, stage__in=[SOURCES, INFERENCE, PROPOSALS]
        )
        outputs = {
            (step.stage, step.key, step.kind): step.output for step in done.order_by("position", "key")
        }
        sources = outputs.get((SOURCES, SOURCES_KIND, SOURCES_KIND))
        merged = outputs.get((PROPOSALS, MOVES, MOVES))
        if sources is None or merged is None:
            raise StageFailed("the moves were not proposed and merged: nothing to debate")
        f1, f2 = (outputs.get((INFERENCE, name, "inference")) for name in (F1, F2))
        proposals: dict[str, ProposedMove] = {}
        for (stage, _, kind), raw in outputs.items():
            if stage == PROPOSALS and kind == PROPOSAL:
                proposals.update({move.move_id: move for move in ProposalOutput.model_validate(raw).moves})
        brief = run.brief
        return cls(
            run=run,
            agency=AgencyConfig.model_validate(run.config),
            found=Findings(
                InferenceOutput.model_validate(f1) if f1 else None,
                InferenceOutput.model_validate(f2) if f2 else None,
                SourcesOutput.model_validate(sources),
            ),
            proposals=proposals,
            merged=MovesOutput.model_validate(merged),
            keep=brief_numbers(brief.question, brief.audience, brief.notes),
            language=brief_language(brief),
        )
