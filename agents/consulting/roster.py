"""Who speaks in the agency: five analyst personas (layer 2), the critic (layer 3) and the board (layer 4).

What each persona believes and how it argues is in its prompt file (``prompts/consulting_*.md``), so an
admin can tune it; here are the names, the one line the run page shows, and the LLM role each calls as
(a role's model and model family are settings: agents.llm.config).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.llm.roles import Role

Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = ("low", "medium", "high")
Member = Literal["d1", "d2", "d3"]
MEMBERS: tuple[Member, ...] = ("d1", "d2", "d3")
Thread = Literal["i1", "i2", "i3"]
THREADS: tuple[Thread, ...] = ("i1", "i2", "i3")
THREAD_OF: dict[Member, Thread] = {"d1": "i1", "d2": "i2", "d3": "i3"}
CRITIC = "critic"


@dataclass(frozen=True)
class Persona:
    name: str  # stored with each move; the prompt file is prompts/consulting_analyst_<name>.md
    title: str
    lens: str  # the run page's one line

    @property
    def prompt(self) -> str:
        return f"consulting_analyst_{self.name}"


# Layer 2: unbiased on risk; each proposes a low, a medium and a high-risk move through its own lens.
ANALYSTS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona("capital", "Capital allocator", "cash generation, the balance sheet, returns on capital"),
        Persona("competition", "Competitive strategist", "market structure, rivals and where the moat is"),
        Persona("operations", "Operations analyst", "cost structure, margins and capacity to execute"),
        Persona("customer", "Customer and product analyst", "demand, pricing power and product cycles"),
        Persona("environment", "Policy and macro analyst", "rates, regulation, trade and public opinion"),
    )
}


@dataclass(frozen=True)
class BoardMember:
    member: Member
    title: str
    lens: str

    @property
    def prompt(self) -> str:
        return f"consulting_board_{self.member}"

    @property
    def thread(self) -> Thread:
        return THREAD_OF[self.member]


# Layer 4 (seed 004): biased towards high-impact growth, each through a different lens.
BOARD: dict[Member, BoardMember] = {
    b.member: b
    for b in (
        BoardMember("d1", "Growth strategist", "market expansion, competitive advantage, long-term position"),
        BoardMember("d2", "Operational pragmatist", "execution feasibility, resources, operational risk"),
        BoardMember("d3", "Stakeholder-value advocate", "shareholder return, brand and public perception"),
    )
}
CRITIC_TITLE = "Critic (a seasoned CFO)"

# The LLM roles: generators (inference, analysts, critic, board turns) and the verdict (the board's scores
# and the jury) may be configured on different model families (seed 003).
INFERENCE_ROLE = Role.INFERENCE
ANALYST_ROLE = Role.ANALYST
CRITIC_ROLE = Role.CRITIC
BOARD_ROLE = Role.BOARD
SCORING_ROLE = Role.SCORING
JURY_ROLE = Role.JURY
