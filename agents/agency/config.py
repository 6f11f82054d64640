"""What an agency run is configured with (``Run.config``), its profiles, and the settings that shape them.

Profiles (the form's choice): ``full`` is seed 004 as drawn (five personas, ten rounds); ``quick`` is sized
for the embedded 2-core model (one persona's three moves, two rounds). ``AGENCY_PERSONAS`` and
``AGENCY_ROUNDS`` override the full profile, ``AGENCY_QUICK_PERSONAS`` and ``AGENCY_QUICK_ROUNDS`` the quick
one.

``AGENCY_SEQUENTIAL_MOVES`` debates one move at a time, the seed's own order (seed 003's tier 3: the same
shards one by one, the same verdict); otherwise each worker process debates up to
``AGENCY_MOVES_PER_WORKER`` moves at once and leaves the rest to the next worker that frees up.
``AGENCY_REQUIRE_SEPARATE_JUDGE`` refuses a run whose board's scores or jury share a model family with the
work they judge (seed 003: generators never judge), through the desk's one check
(memos.pipeline.judge_families).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.agency.personas import ANALYSTS, RISKS
from agents.agency.ranking import RECOMMENDED
from agents.env import ConfigError, Env

MAX_ROUNDS = 10
# Seed 003's kill-argument per recommended move: the strongest rejection (one call), then a fresh thread that
# splits it into atomic objections and rules on each (one call).
JURY_CALLS_PER_MOVE = 2
TOKENS_PER_CALL = 3_000


class AgencyConfig(BaseModel):
    """Validated again whenever a stage reads it: a hand-edited row cannot ask for a thousand rounds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    personas: list[str] = Field(min_length=1, max_length=len(ANALYSTS))
    rounds: int = Field(ge=1, le=MAX_ROUNDS)
    sequential: bool = False
    blind_scores: bool = True  # each member scores every move before round 1, to measure the debate
    jury: bool = True  # seed 003's kill-argument on the recommended moves (role JURY), on by default
    # The moves' order (0: as the personas and risk levels are listed; k: that list rotated by k): a rerun in
    # another order asks every debate afresh, which is how rank stability is measured.
    order: int = Field(default=0, ge=0)

    @field_validator("personas")
    @classmethod
    def _known_personas(cls, personas: list[str]) -> list[str]:
        unknown = [name for name in personas if name not in ANALYSTS]
        if unknown:
            raise ValueError(f"unknown personas {unknown}; known: {sorted(ANALYSTS)}")
        if len(set(personas)) != len(personas):
            raise ValueError("a persona is listed twice")
        return personas

    @property
    def generated(self) -> int:
        """Moves proposed: a low, a medium and a high-risk move per persona."""
        return len(self.personas) * len(RISKS)

    def calls_per_move(self) -> int:
        """1 critique + 3 answers in round 1, 6 turns per later round, 3 final scores (+ 3 blind)."""
        return 1 + 3 + 6 * (self.rounds - 1) + 3 + (3 if self.blind_scores else 0)

    def jury_calls(self, debated: int | None = None) -> int:
        """Two per recommended move (of at most ``debated`` moves ranked), none without a jury."""
        ranked = self.generated if debated is None else debated
        return JURY_CALLS_PER_MOVE * min(RECOMMENDED, ranked) if self.jury else 0

    def calls(self, debated: int | None = None) -> int:
        """Every call a run makes: F1, F2, one per persona, each debated move's debate and the jury's.
        ``debated``: the moves left to debate once code merged duplicates and set aside generic and
        infeasible moves; by default every generated move (the bound planned when the run starts)."""
        moves = self.generated if debated is None else debated
        return 2 + len(self.personas) + moves * self.calls_per_move() + self.jury_calls(moves)

    def budget_tokens(self) -> int:
        """Enough tokens for every call with room: a late turn's prompt carries its whole thread (measured on
        the fake server: about 1,100 prompt tokens a call on average over a full run, 2,500 at most)."""
        return self.calls() * TOKENS_PER_CALL

    def critical_path(self) -> int:
        """Dependent calls per move: critique, answers, (critic, answers) per later round, final scores.
        The blind scores run beside round 1's critique, off the path. (The jury's two threads follow the
        ranking, once per run: memos.pipeline.agency.desk.bench adds them.)"""
        return 1 + 1 + 2 * (self.rounds - 1) + 1


@dataclass(frozen=True)
class Profile:
    name: str
    personas: tuple[str, ...]
    rounds: int

    def config(self, *, sequential: bool, jury: bool = True, order: int = 0) -> AgencyConfig:
        return AgencyConfig(
            name=self.name,
            personas=list(self.personas),
            rounds=self.rounds,
            sequential=sequential,
            jury=jury,
            order=order,
        )


DEFAULT_PROFILES = {
    # One persona's three moves, two rounds: about fifty calls, under fifteen minutes on the 2-core model.
    "quick": Profile("quick", ("capital",), 2),
    "full": Profile("full", tuple(ANALYSTS), MAX_ROUNDS),
}


MOVES_PER_WORKER = 15


@dataclass(frozen=True)
class AgencySettings:
    profiles: dict[str, Profile]
    sequential: bool
    require_separate_judge: bool
    # Debates one worker process runs at once (each on threads of its own); the other moves wait for a
    # worker that frees up, on this machine or another (memos.pipeline.agency.sandbox).
    moves_per_worker: int = MOVES_PER_WORKER
    run_budget_tokens: int | None = None  # None: sized from the profile (AgencyConfig.budget_tokens)
    jury: bool = True  # AGENCY_JURY: seed 003's kill-argument on the recommended moves (on by default)


def load_agency_settings(environ: Mapping[str, str]) -> AgencySettings:
    env = Env(environ)
    profiles = {}
    for name, personas_var, rounds_var in (
        ("quick", "AGENCY_QUICK_PERSONAS", "AGENCY_QUICK_ROUNDS"),
        ("full", "AGENCY_PERSONAS", "AGENCY_ROUNDS"),
    ):
        base = DEFAULT_PROFILES[name]
        personas = tuple(env.items(personas_var, list(base.personas)))
        unknown = [persona for persona in personas if persona not in ANALYSTS]
        if unknown or not personas:
            raise ConfigError(f"{personas_var} names unknown personas {unknown}; known: {sorted(ANALYSTS)}")
        rounds = env.whole(rounds_var, base.rounds, minimum=1)
        if rounds > MAX_ROUNDS:
            raise ConfigError(f"{rounds_var} must be a whole number from 1 to {MAX_ROUNDS}, got {rounds}")
        profiles[name] = Profile(name, personas, rounds)
    return AgencySettings(
        profiles=profiles,
        sequential=env.flag("AGENCY_SEQUENTIAL_MOVES", False),
        require_separate_judge=env.flag("AGENCY_REQUIRE_SEPARATE_JUDGE", False),
        moves_per_worker=env.whole("AGENCY_MOVES_PER_WORKER", MOVES_PER_WORKER, minimum=1),
        run_budget_tokens=env.whole("AGENCY_RUN_BUDGET_TOKENS", 0, minimum=0) or None,
        jury=env.flag("AGENCY_JURY", True),
    )
