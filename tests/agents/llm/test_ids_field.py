"""A citation field narrowed to the ids a role was shown (agents.llm.schema.ids_field), in every workflow's
schemas: an enum of those ids, and with none, the empty list only, never an enum of nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError, create_model

from agents.agency.narrowing import board_schema, critic_schema, inference_schema, moves_schema
from agents.deck.narrowing import framing_schema, slide_schema
from agents.llm.fakes.schema_example import example_for_schema
from agents.llm.schema import ids_field, strict_json_schema
from agents.memo.narrowing import brief_schema, iteration_schema
from agents.screen.narrowing import director_schema, overview_schema, sector_news_schema


def cited(ids: tuple[str, ...], *, low: int = 1, high: int = 3) -> type[BaseModel]:
    return create_model("Cited", citations=(list[str], ids_field(ids, min_length=low, max_length=high)))


def enums(node: Any) -> list[list[Any]]:
    """Every enum anywhere in a JSON schema."""
    if isinstance(node, list):
        return [found for item in node for found in enums(item)]
    if not isinstance(node, dict):
        return []
    own = [node["enum"]] if isinstance(node.get("enum"), list) else []
    return own + [found for value in node.values() for found in enums(value)]


def test_a_list_of_ids_is_an_enum_of_them_within_its_bounds() -> None:
    field = strict_json_schema(cited(("AAPL:revenue:FY2024", "news:1")))["properties"]["citations"]
    assert field["items"] == {"type": "string", "enum": ["AAPL:revenue:FY2024", "news:1"]}
    assert (field["minItems"], field["maxItems"]) == (1, 3)


def test_a_list_of_no_ids_can_only_be_empty_and_holds_no_enum() -> None:
    model = cited((), low=2)
    schema = strict_json_schema(model)
    field = schema["properties"]["citations"]
    # No enum of nothing (no value satisfies it; llama.cpp writes it as an empty group), and no minimum
    # above the maximum of none.
    assert enums(schema) == [] and field["maxItems"] == 0 and "minItems" not in field
    assert model.model_validate({"citations": []})
    with pytest.raises(ValidationError):
        model.model_validate({"citations": ["AAPL:revenue:FY2024"]})
    assert example_for_schema(schema, seed=1) == {"citations": []}


NO_IDS: dict[str, Callable[[], type[BaseModel]]] = {
    "memo brief": lambda: brief_schema("fundamentals", ()),
    "memo iteration": lambda: iteration_schema(()),
    "deck slide": lambda: slide_schema((), ("Growth",)),
    "deck framing": lambda: framing_schema(()),
    "agency inference": lambda: inference_schema((), ()),
    "agency moves": lambda: moves_schema((), ()),
    "agency critic": lambda: critic_schema(()),
    "agency board": lambda: board_schema(()),
    "screen overview": lambda: overview_schema((), ()),
    "screen sector news": lambda: sector_news_schema((), (), ()),
    "screen director": lambda: director_schema((), ()),
}


@pytest.mark.parametrize("build", NO_IDS.values(), ids=list(NO_IDS))
def test_every_workflows_schema_shown_no_ids_has_no_empty_enum_and_the_fake_can_answer_it(
    build: Callable[[], type[BaseModel]],
) -> None:
    narrowed = build()
    schema = strict_json_schema(narrowed)
    assert [] not in enums(schema)
    # What the fake server answers when nothing is scripted: an example the narrowed schema accepts.
    narrowed.model_validate(example_for_schema(schema, seed=7))
