"""example_for_schema makes instances that pydantic accepts back, for the shapes our output types use."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agents.data.types import Citation, Fact, SourceDocument
from agents.llm.fakes.schema_example import UnsupportedSchema, example_for_schema
from agents.llm.prompts import load_prompt_dir
from agents.llm.schema import strict_json_schema
from agents.text.blanks import blank_problem

SEEDS = range(60)


class CitedClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact_id: str = Field(pattern=r"^[A-Z.]{1,6}:[a-z_0-9]+:FY\d{4}(Q[1-4])?$")
    quote: str = Field(min_length=5, max_length=30)


class Bull(BaseModel):
    stance: Literal["bull"]
    upside_pct: float = Field(gt=0, lt=1)


class Bear(BaseModel):
    stance: Literal["bear"]
    downside_steps: int = Field(ge=1, le=9)


class Outline(BaseModel):
    heading: str
    children: list[Outline] = []


class Memo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=3, max_length=12)
    as_of: date
    target_price: Decimal
    score: int = Field(ge=0, le=120, multiple_of=5)
    confidence: float = Field(gt=0, le=1)
    tags: list[str] = Field(min_length=2, max_length=4)
    distinct_ranks: set[int] = Field(min_length=3, max_length=3)
    pair: tuple[int, str]
    claims: list[CitedClaim] = Field(min_length=1)
    view: Annotated[Bull | Bear, Field(discriminator="stance")]
    caveat: CitedClaim | None = None
    risk: Literal["low", "medium", "high"]
    weights: dict[str, float]
    outline: Outline


MODELS: list[type[BaseModel]] = [Memo, Outline, CitedClaim, Fact, Citation, SourceDocument]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_examples_validate_against_the_model_they_came_from(model: type[BaseModel]) -> None:
    for seed in SEEDS:
        model.model_validate(example_for_schema(model.model_json_schema(), seed=seed))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_examples_of_the_strict_schema_sent_to_providers_validate_too(model: type[BaseModel]) -> None:
    for seed in SEEDS:
        model.model_validate(example_for_schema(strict_json_schema(model), seed=seed))


def test_the_same_seed_gives_the_same_instance_and_seeds_vary_it() -> None:
    schema = Memo.model_json_schema()
    assert example_for_schema(schema, seed=7) == example_for_schema(schema, seed=7)
    assert len({repr(example_for_schema(schema, seed=s)) for s in range(10)}) > 1


def test_bounds_lengths_and_patterns_are_respected_exactly() -> None:
    for seed in SEEDS:
        memo = Memo.model_validate(example_for_schema(Memo.model_json_schema(), seed=seed))
        assert 3 <= len(memo.title) <= 12
        assert memo.score % 5 == 0
        assert 0 < memo.confidence <= 1
        assert all(re.fullmatch(r"[A-Z.]{1,6}:[a-z_0-9]+:FY\d{4}(Q[1-4])?", c.fact_id) for c in memo.claims)


def test_enum_const_type_lists_and_exclusive_bounds() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "colour": {"enum": ["red", "green"]},
            "version": {"const": 3},
            "maybe": {"type": ["integer", "null"], "exclusiveMinimum": 4, "exclusiveMaximum": 6},
            "ratio": {"type": "number", "exclusiveMinimum": 0.5, "maximum": 0.5000001},
            "day": {"type": "string", "format": "date"},
        },
        "required": ["colour", "version", "maybe", "ratio", "day"],
        "additionalProperties": False,
    }
    for seed in SEEDS:
        value = example_for_schema(schema, seed=seed)
        assert set(value) == {"colour", "version", "maybe", "ratio", "day"}
        assert value["colour"] in {"red", "green"}
        assert value["version"] == 3
        assert value["maybe"] == 5
        assert 0.5 < value["ratio"] <= 0.5000001
        date.fromisoformat(value["day"])


def test_a_pattern_it_cannot_write_is_reported_not_guessed() -> None:
    with pytest.raises(UnsupportedSchema, match="look-around"):
        example_for_schema({"type": "string", "pattern": "^(?=x)y$"}, seed=1)


def test_a_dangling_ref_is_reported() -> None:
    with pytest.raises(UnsupportedSchema, match="points nowhere"):
        example_for_schema({"$ref": "#/$defs/Missing"}, seed=1)


PRODUCT_PROMPTS = load_prompt_dir(Path(__file__).resolve().parents[3] / "prompts")


@pytest.mark.parametrize("name", sorted(PRODUCT_PROMPTS))
def test_every_schema_the_product_sends_gets_examples_its_model_accepts(name: str) -> None:
    # The fake server's answer to any role nobody scripted: it must pass every validator, not only the
    # schema's shape (a catalyst's date is a calendar date).
    output_type = PRODUCT_PROMPTS[name].output_type
    for seed in range(200):
        output_type.model_validate(example_for_schema(strict_json_schema(output_type), seed=seed))


def test_a_declared_date_is_a_calendar_date_even_beside_a_digit_pattern() -> None:
    schema = {"type": "string", "format": "date", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
    for seed in range(300):
        date.fromisoformat(example_for_schema(schema, seed=seed))
    moment = example_for_schema({"type": "string", "format": "date-time"}, seed=1)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", moment)


def test_a_list_that_may_be_empty_still_gets_an_item_when_it_may_hold_one() -> None:
    lists = {"type": "array", "items": {"type": "integer"}, "maxItems": 8}
    assert all(example_for_schema(lists, seed=seed) for seed in range(100))
    assert example_for_schema({"type": "array", "items": {"type": "integer"}, "maxItems": 0}, seed=1) == []


def test_prose_it_writes_is_prose_the_desks_reader_rules_keep() -> None:
    # A specialist's claim of "risk risk risk valuation" is withheld (agents.text.blanks: a word repeated at a
    # small model's bound), and a memo whose one specialist wrote only such claims had nothing to synthesise:
    # the twenty-brief test on the fake server failed about once in thirty runs.
    statement = {"type": "string", "minLength": 1, "maxLength": 280}
    written = [example_for_schema(statement, seed=seed) for seed in range(3000)]
    assert len(set(written)) > 2000  # seeds still vary it
    assert [text for text in written if blank_problem(text)] == []
