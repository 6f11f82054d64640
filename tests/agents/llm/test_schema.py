"""The response-format schema is made strict enough for OpenAI's structured outputs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agents.llm.schema import schema_name, strict_json_schema


class Source(BaseModel):
    url: str
    title: str = "untitled"


class Finding(BaseModel):
    claim: str
    confidence: float = Field(default=0.5, ge=0, le=1, description="0 to 1")
    source: Source | None = None
    primary: Source = Field(description="where it was first reported")
    tags: dict[str, str] = {}


def objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in objects(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if "properties" in node else []
    return own + [found for value in node.values() for found in objects(value)]


def test_every_object_lists_all_properties_as_required_and_forbids_extras() -> None:
    schema = strict_json_schema(Finding)
    found = objects(schema)
    assert len(found) == 2  # Finding and Source
    for node in found:
        assert node["required"] == list(node["properties"])
        assert node["additionalProperties"] is False


def test_defaults_and_keywords_beside_a_ref_are_dropped() -> None:
    schema = strict_json_schema(Finding)
    assert "default" not in str(schema)
    assert schema["properties"]["primary"] == {"$ref": "#/$defs/Source"}
    assert schema["properties"]["confidence"]["maximum"] == 1


def test_a_dict_field_keeps_its_value_schema() -> None:
    assert strict_json_schema(Finding)["properties"]["tags"]["additionalProperties"] == {"type": "string"}


def test_the_schema_name_is_safe_for_the_api() -> None:
    assert schema_name(Finding) == "Finding"
