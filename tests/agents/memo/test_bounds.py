"""Every output schema's longest answer fits its prompt's max_tokens, so a decoder that enforces the schema
can close a field at its bound but never has to stop the whole answer at the token limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agents.llm.prompts import load_prompt
from agents.llm.schema import strict_json_schema
from agents.memo.bounds import CHARS_PER_TOKEN, Unbounded, worst_case_tokens
from agents.memo.narrowing import brief_schema, iteration_schema
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import Evaluation

PROMPTS = Path(__file__).resolve().parents[3] / "prompts"
# Evidence ids as long as the desk writes them: a ticker, the longest metric, a session date; the enum of a
# narrowed schema holds the run's ids, so its longest one is what counts.
IDS = tuple(f"ABCDE:volatility_annualised_{n:02d}:2017-09-01" for n in range(60))


def _output_type(file: str) -> type[BaseModel]:
    if file.startswith("specialist_"):
        return brief_schema(file.removesuffix(".md").removeprefix("specialist_"), IDS, 8)
    if file == "synthesizer.md":
        return iteration_schema(IDS)
    assert file == "evaluator.md"
    return Evaluation


MEMO_PROMPTS = ["synthesizer.md", "evaluator.md", *(SPECIALISTS[n].prompt_file for n in sorted(SPECIALISTS))]


@pytest.mark.parametrize("file", MEMO_PROMPTS)
def test_the_longest_answer_of_every_memo_prompt_fits_its_max_tokens(file: str) -> None:
    template = load_prompt(PROMPTS / file)
    longest = worst_case_tokens(strict_json_schema(_output_type(file)))
    assert longest <= template.front.max_tokens, (
        f"{file}: its schema allows an answer of {longest} tokens, max_tokens is {template.front.max_tokens}"
    )
    # ... and not so loose that the bound stops meaning anything.
    assert template.front.max_tokens <= longest * 1.25, file


class Open(BaseModel):
    text: str


class Unlisted(BaseModel):
    items: list[str] = Field(max_length=None)


def test_a_schema_with_an_unbounded_string_or_list_has_no_longest_answer() -> None:
    with pytest.raises(Unbounded, match="string without maxLength"):
        worst_case_tokens(strict_json_schema(Open))
    with pytest.raises(Unbounded, match="list without maxItems"):
        worst_case_tokens(strict_json_schema(Unlisted))


class Small(BaseModel):
    kind: Literal["up", "down"]
    note: str = Field(max_length=30)
    tags: list[str] = Field(max_length=2, json_schema_extra={"items": {"type": "string", "maxLength": 5}})


def test_the_estimate_is_the_longest_compact_answer_plus_room_for_whitespace() -> None:
    longest = {"kind": "down", "note": "n" * 30, "tags": ["t" * 5, "t" * 5]}
    chars = len(json.dumps(longest, separators=(",", ":"))) + 2 + 1 + 1  # escape allowance: 30/20, 5/20 x2
    values = 1 + 1 + 1 + 1 + 2  # the object, kind, note, the list and its two items
    assert worst_case_tokens(strict_json_schema(Small)) == -(-chars // CHARS_PER_TOKEN) + values
