"""An agency version's page (seed 004's final output): the ranking, the Recommended Next Moves in full and
the Other Moves by score, each move's debate one click away (its threads and scores, as frozen).

Everything comes from the version's frozen content, never from the run's rows, so a reader of the version
sees what was frozen, and a reader who may not open the run still reads the debate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from agents.agency.board import BOARD, MEMBERS, THREAD_OF
from agents.agency.jury import Verdict
from agents.agency.outputs import (
    DebateOutput,
    JuryOutput,
    ProposedMove,
    RankedMove,
    RankingOutput,
    SetAsideMove,
)
from agents.agency.personas import ANALYSTS
from agents.agency.schemas import METRICS
from memos.models import ArtefactVersion
from memos.services.frozen_text import Segment, segments

KIND = "agency"
# A finding's label as prose references it ("[[F1.2]]"): a version shows it as the label alone.
FINDING = re.compile(r"\[\[(F[12]\.\d+)\]\]")


def _labels(text: str) -> str:
    shown: str = FINDING.sub(r"\1", text)
    return shown


@dataclass(frozen=True)
class MoveView:
    row: RankedMove
    move: ProposedMove
    debate: DebateOutput
    threads: list[dict[str, Any]]  # each member's thread: title, turns
    scores: list[dict[str, Any]]  # a row per member: title, (metric, score, blind score), totals
    # The move's prose with its figures resolved from the version's frozen sources: the move, each paragraph
    # of its reasoning, its risks.
    prose: list[list[Segment]]
    verdict: Verdict | None = None  # the jury's, for a recommended move

    def with_verdict(self, verdict: Verdict | None) -> MoveView:
        return replace(self, verdict=verdict)

    @property
    def persona(self) -> str:
        persona = ANALYSTS.get(self.move.persona)
        return persona.title if persona else self.move.persona


@dataclass(frozen=True)
class AgencyView:
    ranking: RankingOutput
    recommended: list[MoveView]
    others: list[MoveView]
    set_aside: list[SetAsideMove]  # moves code set aside before the debate, with the reason and figures
    # The jury's verdicts as frozen: the Jury section is drawn from them (what stands, what code ruled out,
    # a verdict code could not check said so), not from the section's text, which older versions froze with
    # "survives" on verdicts code could not check.
    jury: JuryOutput | None = None


def agency_context(version: ArtefactVersion) -> dict[str, Any]:
    """``agency_view`` for the version page; None for a version of another kind (or unreadable)."""
    if version.kind != KIND:
        return {"agency_view": None}
    content = version.content
    try:
        ranking = RankingOutput.model_validate(content["ranking"])
        moves = {key: ProposedMove.model_validate(raw) for key, raw in content["moves"].items()}
        debates = {key: DebateOutput.model_validate(raw) for key, raw in content["debates"].items()}
        jury = JuryOutput.model_validate(content["jury"]) if content.get("jury") else None
        set_aside = [SetAsideMove.model_validate(raw) for raw in content.get("set_aside", [])]
    except (KeyError, TypeError, ValidationError):
        return {"agency_view": None}
    verdicts = {verdict.move_id: verdict for verdict in jury.verdicts} if jury is not None else {}
    threads = content.get("threads", {})
    sources = {str(source["id"]): source for source in version.sources}
    views = [
        _view(
            row, moves[row.move_id], debates[row.move_id], threads.get(row.move_id, {}), sources
        ).with_verdict(verdicts.get(row.move_id))
        for row in ranking.ranked
        if row.move_id in moves and row.move_id in debates
    ]
    return {
        "agency_view": AgencyView(
            ranking=ranking,
            recommended=[view for view in views if view.row.recommended],
            others=[view for view in views if not view.row.recommended],
            set_aside=set_aside,
            jury=jury,
        )
    }


def _view(
    row: RankedMove,
    move: ProposedMove,
    debate: DebateOutput,
    threads: dict[str, Any],
    sources: dict[str, dict[str, Any]],
) -> MoveView:
    blind = {s.member: s for s in debate.blind}
    scores = [
        {
            "member": BOARD[s.member].title,
            "metrics": [
                (
                    name.replace("_", " "),
                    s.card.metric(name).score,
                    blind[s.member].card.metric(name).score if s.member in blind else None,
                )
                for name in METRICS
            ],
            "total": s.total,
            "blind_total": blind[s.member].total if s.member in blind else None,
        }
        for s in debate.final
    ]
    return MoveView(
        row=row,
        move=move,
        debate=debate,
        threads=[
            {
                "title": BOARD[m].title,
                "thread": THREAD_OF[m],
                "turns": [
                    {**turn, "text": _labels(str(turn.get("text", "")))}
                    for turn in threads.get(THREAD_OF[m], [])
                ],
            }
            for m in MEMBERS
        ],
        scores=scores,
        prose=[
            segments(_labels(text), sources) for text in (move.move, *move.reasoning, " ".join(move.risks))
        ],
    )
