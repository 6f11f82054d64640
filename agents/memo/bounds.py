"""The longest answer a JSON schema allows, in tokens: what a prompt's ``max_tokens`` must cover.

A decoder that enforces the schema (llama.cpp's grammar, OpenAI's structured outputs) closes a string at its
``maxLength`` and a list at its ``maxItems``, so a schema whose every string and list is bounded has a
longest answer. It is counted here as compact JSON with every bound reached, at ``CHARS_PER_TOKEN``
characters a token (English prose and JSON punctuation run nearer four), plus ``WHITESPACE_PER_VALUE``
tokens of indentation for every value (a model may pretty-print). If that fits ``max_tokens``, the answer is
never cut at the token limit; the gateway still retries a cut answer with a larger budget, for the model
that writes stranger text than the estimate allows.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 3
WHITESPACE_PER_VALUE = 1
ISO_DATE_CHARS = 10


class Unbounded(ValueError):
    """Some string or list in the schema has no bound: its longest answer is unlimited."""


@dataclass(frozen=True)
class Size:
    chars: int
    values: int

    def __add__(self, other: Size) -> Size:
        return Size(self.chars + other.chars, self.values + other.values)

    def times(self, count: int) -> Size:
        return Size(self.chars * count, self.values * count)

    @property
    def tokens(self) -> int:
        return math.ceil(self.chars / CHARS_PER_TOKEN) + self.values * WHITESPACE_PER_VALUE


def worst_case_tokens(schema: dict[str, Any]) -> int:
    """The most tokens an answer valid under ``schema`` can take (raises ``Unbounded`` if unlimited)."""
    return _size(schema, schema.get("$defs", {}), "$").tokens


def _size(node: dict[str, Any], defs: dict[str, Any], path: str) -> Size:  # noqa: PLR0911 - one per kind
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return _size(defs[name], defs, f"{path}->{name}")
    if "anyOf" in node:
        options = [_size(option, defs, path) for option in node["anyOf"]]
        return max(options, key=lambda size: size.tokens)
    if "enum" in node:
        return Size(max(len(json.dumps(value)) for value in node["enum"]), 1)
    if "const" in node:
        return Size(len(json.dumps(node["const"])), 1)
    kind = node.get("type")
    if kind == "object":
        return _object(node, defs, path)
    if kind == "array":
        if "maxItems" not in node:
            raise Unbounded(f"{path}: a list without maxItems")
        count = int(node["maxItems"])
        item = _size(node.get("items", {}), defs, f"{path}[]")
        return Size(2 + max(0, count - 1), 1) + item.times(count)
    if kind == "string":
        return Size(_string_chars(node, path) + 2, 1)
    if kind == "integer":
        return Size(max(len(str(node.get("maximum", 0))), len(str(node.get("minimum", 0)))), 1)
    if kind == "number":
        raise Unbounded(f"{path}: a number has no bounded length")
    if kind == "boolean":
        return Size(5, 1)
    if kind == "null":
        return Size(4, 1)
    raise Unbounded(f"{path}: no type the estimate knows ({kind!r})")


def _object(node: dict[str, Any], defs: dict[str, Any], path: str) -> Size:
    properties: dict[str, Any] = node.get("properties", {})
    total = Size(2 + max(0, len(properties) - 1), 1)
    for name, sub in properties.items():
        total += Size(len(json.dumps(name)) + 1, 0) + _size(sub, defs, f"{path}.{name}")
    return total


def _string_chars(node: dict[str, Any], path: str) -> int:
    if "maxLength" in node:
        # A character the decoder must escape ("\n", a quote) takes two: allow for a few in every string.
        return int(node["maxLength"]) + math.ceil(int(node["maxLength"]) / 20)
    if node.get("format") == "date" or node.get("pattern") == r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$":
        return ISO_DATE_CHARS
    raise Unbounded(f"{path}: a string without maxLength")
