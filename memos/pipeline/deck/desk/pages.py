"""The deck workflow's step documents (seed 001): the typed outputs laid out for one template per kind.

Everything a model wrote (titles, takeaways, bullets, the judge's quotes, the work order) stays a plain string
and is escaped by the template; figures are the code-printed ``display`` strings with their citations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agents.deck.outputs import DeckEvidence, DeckOutput, LapOutput
from memos.models import AgentStep, Run
from memos.pipeline.deck.plan import BASELINE, DECK, DRAFT_KIND, FIGURES, LAP, RUBRIC, SCOPE
from memos.services.refs import Refs


def _output(output: Any, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {"output": output}


def _lap(output: LapOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    rows = []
    if output.scored is not None:
        for key, score in output.scored.scores.items():
            rows.append((key.replace("_", " "), score, output.rescored.get(key)))
    return {"output": output, "score_rows": rows}


def _deck(output: DeckOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {"output": output, "accepted": sum(1 for entry in output.changelog if entry.accepted)}


BUILDERS: dict[str, Callable[[Any, AgentStep, Refs], dict[str, Any]]] = {
    SCOPE: _output,
    RUBRIC: _output,
    FIGURES: _output,
    DRAFT_KIND: _output,
    BASELINE: _output,
    LAP: _lap,
    DECK: _deck,
}


def evidence_ids(run: Run) -> set[str]:
    """What this run's documents may resolve: the figures its data stage froze."""
    raw = (
        run.steps.filter(kind=FIGURES, status=AgentStep.Status.DONE).values_list("output", flat=True).first()
    )
    try:
        return {f.fact_id for f in DeckEvidence.model_validate(raw).figures} if raw is not None else set()
    except ValidationError:
        return set()
