"""The board of the agency's layer 4 (seed 004): three members, biased towards high-impact growth, each
through a different lens, each with its own thread against the critic (D1 in i1, D2 in i2, D3 in i3).

Their turns are generators' work (role ``board``); their scores are the verdict (role ``scoring``), which seed
003 puts on another model family where one is configured. Each member's voice is its prompt file
(``prompts/agency_board_<member>.md``). Its scores are asked through its own lens's questions
(``prompts/agency_board_score_<member>.md``), in a judge thread of its own that holds its blind scores when
it scores again after the debate: three lenses, never three clones of one verdict (seed 003).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.llm.roles import Role

Member = Literal["d1", "d2", "d3"]
MEMBERS: tuple[Member, ...] = ("d1", "d2", "d3")
Thread = Literal["i1", "i2", "i3"]
THREADS: tuple[Thread, ...] = ("i1", "i2", "i3")
THREAD_OF: dict[Member, Thread] = {"d1": "i1", "d2": "i2", "d3": "i3"}
BOARD_ROLE = Role.BOARD  # a member's turn in its thread: generation
SCORING_ROLE = Role.SCORING  # a member's scores of a move: the verdict


@dataclass(frozen=True)
class BoardMember:
    member: Member
    title: str
    lens: str

    @property
    def prompt(self) -> str:
        return f"agency_board_{self.member}"

    @property
    def score_prompt(self) -> str:
        """Its lens's scoring prompt: each member scores through its own questions, in its own thread."""
        return f"agency_board_score_{self.member}"

    @property
    def thread(self) -> Thread:
        return THREAD_OF[self.member]


BOARD: dict[Member, BoardMember] = {
    b.member: b
    for b in (
        BoardMember("d1", "Growth strategist", "market expansion, competitive advantage, long-term position"),
        BoardMember("d2", "Operational pragmatist", "execution feasibility, resources, operational risk"),
        BoardMember("d3", "Stakeholder-value advocate", "shareholder return, brand and public perception"),
    )
}
