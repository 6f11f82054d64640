"""Who runs in a memo: the specialist roster and the synthesis depth per profile (configuration, not code).

``MEMO_ROSTER`` (comma-separated specialist names) and ``MEMO_ITERATIONS`` override the full profile;
``MEMO_QUICK_ROSTER`` and ``MEMO_QUICK_ITERATIONS`` the quick one (sized for the embedded 2-core model).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.env import ConfigError, Env
from agents.llm.roles import Role
from agents.memo.schemas import MAX_ITERATIONS


@dataclass(frozen=True)
class Specialist:
    name: str  # also the LLM role and the prompt file prompts/specialist_<name>.md
    title: str
    scope: str  # what the evidence selector gathers for it (shown on the run page)

    @property
    def prompt_file(self) -> str:
        return f"specialist_{self.name}.md"

    @property
    def role(self) -> Role:
        return Role(self.name)


SPECIALISTS: dict[str, Specialist] = {
    s.name: s
    for s in (
        Specialist("fundamentals", "Fundamentals", "filed annual and quarterly figures, margins and growth"),
        Specialist("competitive", "Competitive landscape", "the company's and its sector peers' figures"),
        Specialist(
            "macro", "Macro", "market beta and volatility, prediction markets on rates and the economy"
        ),
        Specialist("regulatory", "Regulatory", "documents on litigation, antitrust, regulation and policy"),
        Specialist("quant", "Quant", "the price-based profile: returns, beta, alpha, trend, RSI, volatility"),
        Specialist("news", "News and sentiment", "recent news about the company"),
    )
}


@dataclass(frozen=True)
class Profile:
    name: str
    roster: tuple[str, ...]
    iterations: int
    max_claims: int = 8  # per specialist brief: fewer claims, fewer tokens for a small local model

    def config(self) -> MemoConfig:
        return MemoConfig(
            name=self.name, roster=list(self.roster), iterations=self.iterations, max_claims=self.max_claims
        )


MAX_EVALUATION_RERUNS = 20
MAX_FOCUS = 600


class MemoConfig(BaseModel):
    """What a memo run was started with (``Run.config``): validated again whenever a stage reads it, so a
    hand-edited row cannot ask for ten thousand iterations or a specialist that does not exist."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    roster: list[str] = Field(min_length=1, max_length=len(SPECIALISTS))
    iterations: int = Field(ge=1, le=MAX_ITERATIONS)
    max_claims: int = Field(default=8, ge=1, le=8)
    # How many times a person re-ran the evaluation alone (memos.pipeline.memo.desk.rerun): the evaluator's
    # prompt says so, which makes it a new request rather than the one that failed.
    evaluation_reruns: int = Field(default=0, ge=0, le=MAX_EVALUATION_RERUNS)
    # What this run looks at beyond its brief, written by code (the desk's week: the name's flag and its
    # reason); prompts carry it beside the brief, and "" says nothing.
    focus: str = Field(default="", max_length=MAX_FOCUS)

    @field_validator("roster")
    @classmethod
    def _known_specialists(cls, roster: list[str]) -> list[str]:
        unknown = [name for name in roster if name not in SPECIALISTS]
        if unknown:
            raise ValueError(f"unknown specialists {unknown}")
        return roster


FULL, QUICK = "full", "quick"  # the profiles' names, as briefs, settings and the week's desk name them

DEFAULT_PROFILES = {
    FULL: Profile(FULL, tuple(SPECIALISTS), 3),
    QUICK: Profile(QUICK, ("fundamentals", "quant", "news"), 1, max_claims=4),
}


class RosterError(ValueError):
    pass


def load_profiles(environ: Mapping[str, str]) -> dict[str, Profile]:
    env = Env(environ)
    profiles = dict(DEFAULT_PROFILES)
    for name, roster_var, iterations_var in (
        (FULL, "MEMO_ROSTER", "MEMO_ITERATIONS"),
        (QUICK, "MEMO_QUICK_ROSTER", "MEMO_QUICK_ITERATIONS"),
    ):
        base = profiles[name]
        roster = tuple(env.items(roster_var, list(base.roster)))
        unknown = [n for n in roster if n not in SPECIALISTS]
        if unknown:
            raise RosterError(
                f"{roster_var} names unknown specialists {unknown}; known: {sorted(SPECIALISTS)}"
            )
        try:
            iterations = env.whole(iterations_var, base.iterations, minimum=1)
        except ConfigError as exc:
            raise RosterError(
                f"{iterations_var} must be a whole number from 1 to {MAX_ITERATIONS} ({exc})"
            ) from exc
        if iterations > MAX_ITERATIONS:
            raise RosterError(
                f"{iterations_var} must be a whole number from 1 to {MAX_ITERATIONS}, got {iterations}"
            )
        profiles[name] = Profile(name, roster, iterations, base.max_claims)
    return profiles
