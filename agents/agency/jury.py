"""Seed 003's kill-argument on the agency's recommended moves, and its verdict by code.

Two threads per move, on the jury's role: the first writes the strongest rejection of the move in one call;
the second, a fresh conversation that sees only the move and that rejection, splits the rejection into three
to seven atomic objections and rules on each with a quote. The adjudicator never gives a verdict: code
computes it from the rulings, by this rule:

- An "answered" ruling counts only when its quote is a passage of the move (an answer must be the move's own
  words); an "unsupported" ruling only when its quote is a passage of the move or of the rejection. A ruling
  whose quote code cannot find is not taken: the objection stands, unchecked.
- An objection ruled "stands" whose quote is a passage of the move or of the rejection stands, checked.
- The move does not survive the jury when more than ``MOST_STANDING`` (zero) objections stand checked: one
  objection the adjudicator grounds in the text and the move does not answer is enough, as in the seed.
  Objections standing unchecked are shown, and do not decide the verdict: code decides only on what it
  could check.

A recommended move that does not survive is a disagreement with the board's ranking, shown as such: the
ranking itself stays the board's.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from agents.agency.schemas import JuryAudit, Rejection, Ruling
from agents.llm.roles import Role
from agents.text.patterns import Prose, patterned
from agents.text.quotes import quote_problem

MOST_STANDING = 0
JURY_ROLE = Role.JURY  # the verdict's role: on its own model family where one is configured (seed 003)


class RuledObjection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    objection: str
    ruling: Ruling  # as code takes it: an unchecked "answered" or "unsupported" stands
    quote: str
    quote_found: bool
    asked: Ruling | None = None  # the adjudicator's ruling, where code did not take it

    @property
    def checked_standing(self) -> bool:
        return self.ruling == "stands" and self.quote_found


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    move_id: str
    rank: int
    rejection: str = ""  # the first thread's memo
    objections: list[RuledObjection]
    standing: int  # every objection that stands, checked or not
    answered: int
    unsupported: int
    checked: int = 0  # objections standing on a quote code found: the ones that decide
    survives: bool

    @property
    def left_standing(self) -> list[RuledObjection]:
        return [item for item in self.objections if item.ruling == "stands"]

    @property
    def line(self) -> str:
        word = "survives" if self.survives else "does not survive"
        head = (
            f"{self.move_id} (rank {self.rank}) {word} the jury: {self.standing} of {len(self.objections)} "
            f"objections stand ({self.checked} on a checked quote), {self.answered} answered, "
            f"{self.unsupported} unsupported"
        )
        standing = [
            f"\u201c{item.objection}\u201d{'' if item.quote_found else ' (quote not found)'}"
            for item in self.left_standing
        ]
        return head + ("; standing: " + "; ".join(standing) if standing else "")


def verdict(move_id: str, rank: int, audit: JuryAudit, move: str, rejection: str) -> Verdict:
    """The verdict on a move from the second thread's rulings, ``move`` the move as the jury read it and
    ``rejection`` the first thread's memo (the only texts a quote may come from)."""
    ruled = []
    for item in audit.objections:
        where = [move] if item.ruling == "answered" else [move, rejection]
        found = not quote_problem(item.quote, where, where="the move or the rejection")
        ruling: Ruling = item.ruling if found or item.ruling == "stands" else "stands"
        ruled.append(
            RuledObjection(
                objection=item.objection,
                ruling=ruling,
                quote=item.quote,
                quote_found=found,
                asked=item.ruling if ruling != item.ruling else None,
            )
        )
    checked = sum(1 for item in ruled if item.checked_standing)
    return Verdict(
        move_id=move_id,
        rank=rank,
        rejection=rejection,
        objections=ruled,
        standing=sum(1 for item in ruled if item.ruling == "stands"),
        answered=sum(1 for item in ruled if item.ruling == "answered"),
        unsupported=sum(1 for item in ruled if item.ruling == "unsupported"),
        checked=checked,
        survives=checked <= MOST_STANDING,
    )


@lru_cache(maxsize=64)
def rejection_schema(ids: tuple[str, ...]) -> type[Rejection]:
    """The memo may reference ``ids`` (the claims and the figures), never type a figure."""
    return patterned(Rejection, Prose(ids), ["rejection"])
