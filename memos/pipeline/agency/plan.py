"""The agency's stages and steps: their names (the only place they are written), titles and kinds.

Stages follow seed 004's layers: L0 sources (code), L1 inference (F1, F2), L2 proposals (the personas, then
the merge by code), the sandbox (one debate per move), the final ranking (code).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.agency.config import AgencyConfig
from agents.agency.personas import ANALYSTS, RISKS
from memos.pipeline.workflows import PlannedStep

# The workflow's name: stored in Run.workflow, and the kind of the versions its runs freeze.
NAME = "agency"

SOURCES = "sources"
INFERENCE = "inference"
PROPOSALS = "proposals"
SANDBOX = "sandbox"
FINAL = "final"

# Step kinds (and the keys of the steps there is one of).
SOURCES_KIND = "sources"
INFERENCE_KIND = "inference"
PROPOSAL = "proposal"
MOVES = "moves"
DEBATE = "debate"
RANKING = "ranking"
JURY = "jury"

F1, F2 = "F1", "F2"


def move_id(number: int) -> str:
    return f"m{number}"


def debate_key(move: str) -> str:
    return f"debate-{move}"


def move_of(debate: str) -> str:
    """The move a debate step's key names (``debate_key``'s inverse)."""
    return debate.removeprefix("debate-")


# Why a duplicate's debate step is skipped: it is debated under the move it was merged into.
MERGED_SKIP = "merged into the move proposed first with the same action and target"
# How a move set aside by code before the debate (generic, infeasible) says so: its step's summary and its
# row's failure begin with it, followed by the reason.
SET_ASIDE = "not debated: "


def move_numbers(config: AgencyConfig) -> dict[tuple[str, str], int]:
    """(persona, risk) -> the move's number: m1..m3 the first persona's low, medium and high-risk moves, or,
    for a run with another ``order`` k, the same list rotated by k: each move gets another number (for k not a
    multiple of the count), so each of its debate's prompts is new and no answer comes from the ledger."""
    pairs = [(persona, risk) for persona in config.personas for risk in RISKS]
    shift = config.order % len(pairs)
    pairs = pairs[shift:] + pairs[:shift]
    return {pair: number for number, pair in enumerate(pairs, start=1)}


def plan(config: Mapping[str, Any]) -> list[PlannedStep]:
    agency = AgencyConfig.model_validate(config)
    planned = [PlannedStep(SOURCES, SOURCES_KIND, SOURCES_KIND, "Layer 0: data gathered by code")]
    planned += [
        PlannedStep(INFERENCE, F1, INFERENCE_KIND, "F1: financial inference", "inference", 0),
        PlannedStep(INFERENCE, F2, INFERENCE_KIND, "F2: trend and sentiment inference", "inference", 1),
    ]
    planned += [
        PlannedStep(PROPOSALS, name, PROPOSAL, ANALYSTS[name].title, "analyst", index)
        for index, name in enumerate(agency.personas)
    ]
    planned += [PlannedStep(PROPOSALS, MOVES, MOVES, "Duplicates merged (code)", "", len(agency.personas))]
    planned += [
        PlannedStep(SANDBOX, debate_key(move_id(number)), DEBATE, f"Debate on {move_id(number)}", "", number)
        for number in range(1, agency.generated + 1)
    ]
    planned += [PlannedStep(FINAL, RANKING, RANKING, "Ranking (code)")]
    if agency.jury:
        planned += [
            PlannedStep(FINAL, JURY, JURY, "Jury: the kill-argument on the recommended moves", "jury", 1)
        ]
    return planned
