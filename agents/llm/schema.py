"""The JSON schema sent as the response format, made acceptable to OpenAI's strict structured outputs; and
the field every workflow's narrowed schemas cite ids with (``ids_field``).

Strict mode wants every property listed in ``required``, ``additionalProperties: false`` on every object, no
``default`` and no keywords beside a ``$ref``. Listing a defaulted field as required only means the model must
write it out; pydantic still validates the answer against the original model.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import BaseModel, Field

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def schema_name(output_type: type[BaseModel]) -> str:
    return _NAME_CHARS.sub("_", output_type.__name__)[:64] or "Output"


@functools.cache
def strict_json_schema(output_type: type[BaseModel]) -> dict[str, Any]:
    """Cached per type (building it costs more than the rest of a cached call); callers must not mutate it."""
    strict = _strictify(output_type.model_json_schema())
    assert isinstance(strict, dict)
    return strict


def ids_field(
    ids: tuple[str, ...], *, min_length: int, max_length: int, description: str | None = None
) -> Any:
    """A list field whose items are among ``ids``: a JSON-schema enum a constrained decoder cannot leave
    (every workflow's narrowed schemas cite the ids a role was shown this way).

    No ids: the empty list and nothing else (``maxItems: 0``, no enum, no ``minItems``). An enum of no values
    is no schema to send: JSON Schema admits no value under it (draft 4 required an enum to hold one); the
    fake server's example writer has nothing to choose from and fails; llama.cpp writes it as an empty
    group, ``() space``, which matches the empty text, so the decoder may write the list as ``[]`` whatever
    its ``minItems``, or as ``[,]``, which is not JSON. A ``minItems`` above ``maxItems`` would be as
    unsatisfiable, so it goes too: an item that must cite an id then fails its base schema's bound or code's
    checks, as any uncited claim does, and a caller that can bounds the item's own list to none (the
    screen's key events without documents).
    """
    if not ids:
        return Field(max_length=0, description=description)
    return Field(
        min_length=min_length,
        max_length=max_length,
        description=description,
        json_schema_extra={"items": {"type": "string", "enum": list(ids)}},
    )


# Keywords whose values are data (literal values) or maps from names to schemas, not schemas themselves.
_DATA_KEYWORDS = frozenset({"enum", "const", "examples", "required"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        # A self-referencing root model is a bare $ref beside the definitions it points into.
        kept = {key: node[key] for key in ("$ref", "$defs") if key in node}
        return {key: _strictify_map(value) if key == "$defs" else value for key, value in kept.items()}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key in _DATA_KEYWORDS:
            out[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = _strictify_map(value)
        else:
            out[key] = _strictify(value)
    if isinstance(node.get("properties"), dict):
        out["required"] = list(node["properties"])
        out.setdefault("additionalProperties", False)
    return out


def _strictify_map(schemas: dict[str, Any]) -> dict[str, Any]:
    return {name: _strictify(sub) for name, sub in schemas.items()}
