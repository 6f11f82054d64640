"""The five analyst personas of the agency's layer 2 (seed 004): unbiased on risk, each proposes a low, a
medium and a high-risk move through its own lens. Generators only (seed 003): they never rank or score.

What each persona believes and how it argues is in its prompt file (``prompts/agency_analyst_<name>.md``),
so an admin can tune it; here are the names, the one line the run page shows, and the LLM role they call as
(a role's model and model family are settings: agents.llm.config). The critic is ``agents.agency.critic``,
the board ``agents.agency.board``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.llm.roles import Role

Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = ("low", "medium", "high")
ANALYST_ROLE = Role.ANALYST


@dataclass(frozen=True)
class Persona:
    name: str  # stored with each move; the prompt file is prompts/agency_analyst_<name>.md
    title: str
    lens: str  # the run page's one line

    @property
    def prompt(self) -> str:
        return f"agency_analyst_{self.name}"


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
