"""The jury's verdict, by code (seed 003: the adjudicator lists and rules; the verdict is computed by the
skill, not by the adjudicator).

A recommended move survives the jury when at most ``MOST_STANDING`` of the atomic objections against it still
stand after the debate; a ruling whose quote is not a passage of the move or its debate does not count (an
objection ruled "answered" without evidence is taken to stand). A recommended move that does not survive is
a disagreement with the board's ranking, shown as such: the ranking itself stays the board's.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.agency.schemas import JuryAudit
from agents.llm.roles import Role
from agents.text.quotes import quote_problem

MOST_STANDING = 1
JURY_ROLE = Role.JURY  # the verdict's role: on its own model family where one is configured (seed 003)


class RuledObjection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    objection: str
    ruling: str
    quote: str
    quote_found: bool


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    move_id: str
    rank: int
    objections: list[RuledObjection]
    standing: int
    answered: int
    unsupported: int
    survives: bool

    @property
    def line(self) -> str:
        word = "survives" if self.survives else "does not survive"
        return (
            f"{self.move_id} (rank {self.rank}) {word} the jury: {self.standing} of {len(self.objections)} "
            f"objections stand, {self.answered} answered, {self.unsupported} unsupported"
        )


def verdict(move_id: str, rank: int, audit: JuryAudit, texts: Sequence[str]) -> Verdict:
    ruled = []
    for item in audit.objections:
        found = not quote_problem(item.quote, texts, where="the move or its debate")
        # An "answered" ruling needs the debate's words behind it; without them the objection stands.
        ruling = item.ruling if found or item.ruling != "answered" else "stands"
        ruled.append(
            RuledObjection(objection=item.objection, ruling=ruling, quote=item.quote, quote_found=found)
        )
    standing = sum(1 for item in ruled if item.ruling == "stands")
    return Verdict(
        move_id=move_id,
        rank=rank,
        objections=ruled,
        standing=standing,
        answered=sum(1 for item in ruled if item.ruling == "answered"),
        unsupported=sum(1 for item in ruled if item.ruling == "unsupported"),
        survives=standing <= MOST_STANDING,
    )
