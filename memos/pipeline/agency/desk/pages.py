"""The agency's step documents (seed 004), arranged for their templates: layer 0's sources, F1 and F2, each
persona's moves, the merge, a move's debate (its threads as alternating turns with their round, and the
board's scores, blind and final) and the ranking.

Model text stays a plain string, shown through the ``prose`` tag (figures rendered from the fact store,
everything escaped); claim ids (F1.n, F2.n) are shown as themselves, with the claim's words on hover.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from agents.agency.board import BOARD, MEMBERS, THREAD_OF
from agents.agency.config import AgencyConfig
from agents.agency.outputs import (
    DebateOutput,
    InferenceOutput,
    MovesOutput,
    ProposalOutput,
    SourcesOutput,
)
from agents.agency.personas import ANALYSTS
from agents.agency.schemas import METRICS
from agents.text.figures import fact_ids_in
from memos.models import AgentStep, DebateTurn, Move, Run
from memos.pipeline.agency.plan import (
    DEBATE,
    INFERENCE_KIND,
    JURY,
    MOVES,
    PROPOSAL,
    RANKING,
    SOURCES_KIND,
)
from memos.pipeline.agency.turns import in_thread
from memos.services.refs import Refs


def findings_of(run_id: UUID) -> dict[str, str]:
    """The run's F1 and F2 claims by label: what ``[[F1.2]]`` in a move or a turn refers to."""
    raw = AgentStep.objects.filter(run_id=run_id, kind=INFERENCE_KIND, status=AgentStep.Status.DONE)
    found: dict[str, str] = {}
    for output in raw.values_list("output", flat=True):
        try:
            found.update({c.claim_id: c.statement for c in InferenceOutput.model_validate(output).claims})
        except ValidationError:
            continue
    return found


def _labelled(refs: Refs, step: AgentStep) -> dict[str, Any]:
    return {"refs": refs.with_labels(findings_of(step.run_id))}


def _output(output: Any, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {"output": output}


def _proposal(output: ProposalOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {"output": output, "persona": ANALYSTS.get(output.persona)} | _labelled(refs, step)


def _moves(output: MovesOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {"output": output, "personas": ANALYSTS}


def _threads(run_id: UUID, move_id: str) -> list[dict[str, Any]]:
    move = Move.objects.filter(run_id=run_id, move_id=move_id).first()
    turns = list(DebateTurn.objects.filter(move=move)) if move else []
    return [
        {"member": BOARD[member], "thread": THREAD_OF[member], "turns": in_thread(turns, THREAD_OF[member])}
        for member in MEMBERS
    ]


def _debate(output: DebateOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    blind = {s.member: s for s in output.blind}
    rows = [
        {
            "member": BOARD[s.member],
            "scores": [
                (
                    name.replace("_", " "),
                    s.card.metric(name),
                    blind[s.member].card.metric(name).score if s.member in blind else None,
                )
                for name in METRICS
            ],
            "total": s.total,
            "blind_total": blind[s.member].total if s.member in blind else None,
            "quotes_found": s.quotes_found,
        }
        for s in output.final
    ]
    return {
        "output": output,
        "threads": _threads(step.run_id, output.move_id),
        "rows": rows,
        "rounds": output.rounds,
    } | _labelled(refs, step)


def _debate_so_far(step: AgentStep) -> tuple[set[str], Callable[[Refs], dict[str, Any]]]:
    """A debate under way: its threads as the rows hold them now (the page reloads it as turns arrive)."""
    threads = _threads(step.run_id, step.key.removeprefix("debate-"))
    cited = {ref for thread in threads for turn in thread["turns"] for ref in fact_ids_in(turn.text)}
    rounds = AgencyConfig.model_validate(step.run.config).rounds
    return cited, lambda refs: {
        "output": None,
        "threads": threads,
        "rows": [],
        "rounds": rounds,
        "live": True,
    }


GROWING = {DEBATE: _debate_so_far}
BUILDERS: dict[str, Callable[[Any, AgentStep, Refs], dict[str, Any]]] = {
    SOURCES_KIND: _output,
    INFERENCE_KIND: _output,
    PROPOSAL: _proposal,
    MOVES: _moves,
    DEBATE: _debate,
    RANKING: _output,
    JURY: _output,
}


def evidence_ids(run: Run) -> set[str]:
    """What this run's documents may resolve: the figures and documents layer 0 gathered."""
    raw = (
        run.steps.filter(kind=SOURCES_KIND, status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    if raw is None:
        return set()
    try:
        gathered = SourcesOutput.model_validate(raw)
    except ValidationError:
        return set()
    return {item.evidence_id for item in gathered.facts} | {
        document.doc_id for document in gathered.documents
    }
