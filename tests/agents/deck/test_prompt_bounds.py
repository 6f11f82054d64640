"""Every deck prompt's longest answer (its schema narrowed the way a run narrows it, at the profile's largest
deck) fits its max_tokens, and not so loosely that the bound stops meaning anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from agents.deck.narrowing import revision_schema, section_slide_schema
from agents.deck.schemas import Framing, R1Judgement, R2Judgement, RubricProposal, Scope, WorkOrder
from agents.llm.prompts import load_prompt
from agents.llm.schema import strict_json_schema
from agents.memo.bounds import worst_case_tokens

PROMPTS = Path(__file__).resolve().parents[3] / "prompts"
# Ids as long as the fact store writes them (ticker, the longest metric, a session date), sections as long
# as a scope may name them.
IDS = tuple(f"ABCDE:volatility_annualised_{n:02d}:2017-09-01" for n in range(60))
SECTIONS = tuple(f"Section name number {n:02d} of the deck" for n in range(6))
OUTPUTS: dict[str, type[BaseModel]] = {
    "deck_scope.md": Scope,
    "deck_rubric.md": RubricProposal,
    "deck_drafter.md": section_slide_schema(IDS, SECTIONS[0]),
    "deck_framing.md": Framing,
    "deck_reviser.md": revision_schema(IDS, SECTIONS, (1, 2, 3)),
    "deck_gate.md": R1Judgement,
    "deck_scorer.md": R2Judgement,
    "deck_rescore.md": R2Judgement,
    "deck_planner.md": WorkOrder,
}


def test_every_deck_prompt_is_listed_here() -> None:
    assert {path.name for path in PROMPTS.glob("deck_*.md")} == set(OUTPUTS)


@pytest.mark.parametrize("file", sorted(OUTPUTS))
def test_the_longest_answer_of_every_deck_prompt_fits_its_max_tokens(file: str) -> None:
    template = load_prompt(PROMPTS / file)
    longest = worst_case_tokens(strict_json_schema(OUTPUTS[file]))
    assert longest <= template.front.max_tokens, (
        f"{file}: {longest} tokens possible, {template.front.max_tokens} max"
    )
    assert template.front.max_tokens <= longest * 1.25, file
