"""The JSON schema sent as the response format, made acceptable to OpenAI's strict structured outputs.

Strict mode wants every property listed in ``required``, ``additionalProperties: false`` on every object, no
``default`` and no keywords beside a ``$ref``. Listing a defaulted field as required only means the model must
write it out; pydantic still validates the answer against the original model.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import BaseModel

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def schema_name(output_type: type[BaseModel]) -> str:
    return _NAME_CHARS.sub("_", output_type.__name__)[:64] or "Output"


@functools.cache
def strict_json_schema(output_type: type[BaseModel]) -> dict[str, Any]:
    """Cached per type (building it costs more than the rest of a cached call); callers must not mutate it."""
    strict = _strictify(output_type.model_json_schema())
    assert isinstance(strict, dict)
    return strict


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
