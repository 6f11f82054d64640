"""A schema-valid example instance for a JSON schema: what the fakes answer when nothing is scripted.

Covers what pydantic emits: ``$defs``/``$ref``, ``allOf``/``anyOf``/``oneOf``, ``enum``, ``const``, type
lists, strings (``minLength``/``maxLength``, ``format`` date, date-time, email, uri, uuid, honoured before
a simple ``pattern``), numbers and integers with inclusive or exclusive bounds and ``multipleOf``, arrays
(``items``, ``prefixItems``, ``minItems``/``maxItems``, ``uniqueItems``; at least one item where allowed)
and objects (every property, ``additionalProperties``).
"""

from __future__ import annotations

import json
import math
import random
import re
import string
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

_WORDS = (
    *("revenue", "margin", "growth", "guidance", "demand", "pricing", "capital", "cash", "flow", "outlook"),
    *("risk", "segment", "share", "backlog", "supply", "cost", "leverage", "valuation", "catalyst"),
)
_MAX_DEPTH = 6  # past this, recursive schemas get their smallest valid value
_DEFAULT_SPAN = 100
_ATTEMPTS = 25


class UnsupportedSchema(ValueError):
    """The schema uses something the generator does not handle (a regex look-ahead, an unknown ``$ref``)."""


def example_for_schema(schema: Mapping[str, Any], *, seed: int | None = None) -> Any:
    """An instance of ``schema``; the same seed gives the same instance, ``None`` a fresh random one."""
    return _Generator(schema, random.Random(seed)).value(schema, 0)  # noqa: S311 - test data, not security


class _Generator:
    def __init__(self, root: Mapping[str, Any], rng: random.Random) -> None:
        self.root = root
        self.rng = rng

    def value(self, schema: Mapping[str, Any], depth: int) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(list(schema["enum"]))
        if "allOf" in schema:
            return self.value(self.merge(schema), depth)
        if schema.get("oneOf"):
            return self.union(schema["oneOf"], depth, shuffle=True)
        if schema.get("anyOf"):
            # In order: pydantic lists the branch that validates best first (Decimal is number | string).
            return self.union(schema["anyOf"], depth, shuffle=False)
        kind = self.kind(schema, depth)
        writers: dict[str, Callable[[Mapping[str, Any], int], Any]] = {
            "null": lambda _schema, _depth: None,
            "boolean": lambda _schema, _depth: self.rng.choice([True, False]),
            "integer": self.integer,
            "number": self.number,
            "string": self.string,
            "array": self.array,
            "object": self.object,
        }
        if kind not in writers:
            raise UnsupportedSchema(f"unknown JSON schema type {kind!r}")
        return writers[kind](schema, depth)

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen: set[str] = set()
        while "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#") or ref in seen:
                raise UnsupportedSchema(f"cannot follow $ref {ref!r}")
            seen.add(ref)
            target: Any = self.root
            for part in filter(None, ref[1:].split("/")):
                key = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, Mapping) or key not in target:
                    raise UnsupportedSchema(f"$ref {ref!r} points nowhere")
                target = target[key]
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings}
        return schema

    def merge(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            resolved = self.resolve(part)
            properties = {**merged.get("properties", {}), **resolved.get("properties", {})}
            required = [*merged.get("required", []), *resolved.get("required", [])]
            merged = {**resolved, **merged, "properties": properties, "required": required}
        if not merged["properties"]:
            del merged["properties"]
        return merged

    def union(self, options: list[Mapping[str, Any]], depth: int, *, shuffle: bool) -> Any:
        resolved = [self.resolve(option) for option in options]
        nulls = [o for o in resolved if o.get("type") == "null"]
        others = [o for o in resolved if o.get("type") != "null"]
        if depth >= _MAX_DEPTH and nulls:
            return None
        if shuffle:
            self.rng.shuffle(others)
        for option in [*others, *nulls]:
            try:
                return self.value(option, depth + 1)
            except UnsupportedSchema:
                continue  # another branch may be simpler (a look-ahead pattern beside a plain number)
        raise UnsupportedSchema(f"no branch of {options!r} can be generated")

    def kind(self, schema: Mapping[str, Any], depth: int) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            concrete = [t for t in declared if t != "null"]
            if not concrete or (depth >= _MAX_DEPTH and "null" in declared):
                return "null"
            return str(self.rng.choice(concrete))
        if isinstance(declared, str):
            return declared
        if "properties" in schema or "additionalProperties" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
        return "string"  # an unconstrained value: any JSON will do

    def integer(self, schema: Mapping[str, Any], _depth: int) -> int:
        low = _bound(schema, "minimum", "exclusiveMinimum")
        high = _bound(schema, "maximum", "exclusiveMaximum")
        # An exclusive bound that is a whole number excludes itself; a fractional one is passed by rounding.
        least = None if low is None else math.floor(low[0]) + 1 if low[1] else math.ceil(low[0])
        most = None if high is None else math.ceil(high[0]) - 1 if high[1] else math.floor(high[0])
        lo, hi = (math.ceil(v) for v in _span(least, most))
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            first = math.ceil(lo / step) * step
            if first > hi:
                raise UnsupportedSchema(f"no multiple of {step} in [{lo}, {hi}]")
            return first + step * self.rng.randint(0, (hi - first) // step)
        return self.rng.randint(lo, hi)

    def number(self, schema: Mapping[str, Any], _depth: int) -> float:
        low = _bound(schema, "minimum", "exclusiveMinimum")
        high = _bound(schema, "maximum", "exclusiveMaximum")
        lo, hi = _span(low[0] if low else None, high[0] if high else None)
        step = schema.get("multipleOf")
        for _ in range(_ATTEMPTS):
            candidate = self.rng.uniform(lo, hi)
            candidate = round(candidate / step) * step if step else round(candidate, 2)
            if _within(candidate, low, high):
                return float(candidate)
        middle = (lo + hi) / 2
        if _within(middle, low, high):
            return middle
        raise UnsupportedSchema(f"cannot find a number within {schema!r}")

    def string(self, schema: Mapping[str, Any], _depth: int) -> str:
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 60)))
        # A declared format first (a pattern beside it must match too): a date written digit by digit from
        # a pattern such as ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ is rarely a calendar date.
        formatted = self.formatted(schema.get("format"))
        fits = formatted is not None and low <= len(formatted) <= high
        if fits and ("pattern" not in schema or re.search(str(schema["pattern"]), str(formatted))):
            return str(formatted)
        if "pattern" in schema:
            pattern = str(schema["pattern"])
            # Prose under a pattern that only keeps figures out (agents.text.patterns) reads as words: the
            # words the schema would get without it, where they match.
            words = self.words(low, high)
            if re.fullmatch(pattern, words):
                return words
            for _ in range(_ATTEMPTS):
                text = _PatternWriter(pattern, self.rng).write()
                if low <= len(text) <= high and re.search(pattern, text):
                    return text
            raise UnsupportedSchema(f"cannot write a string for pattern {pattern!r} within [{low}, {high}]")
        return self.words(low, high)

    def words(self, low: int, high: int) -> str:
        target = self.rng.randint(low, max(low, min(high, low + 40)))
        words: list[str] = []
        while len(" ".join(words)) < target:
            # Never the word just written: "risk risk risk valuation" is what a small model looping at its
            # bound writes, and the desk's reader rules withhold it (agents.text.blanks), so a memo whose one
            # specialist wrote one such claim had nothing left to synthesise (one run of the twenty-brief
            # test in thirty or so).
            words.append(self.rng.choice([w for w in _WORDS if not words or w != words[-1]]))
        return " ".join(words)[:high].strip().ljust(low, "x")

    def formatted(self, fmt: Any) -> str | None:
        if fmt == "date":
            return (date(2020, 1, 1) + timedelta(days=self.rng.randint(0, 2190))).isoformat()
        if fmt == "date-time":
            moment = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(seconds=self.rng.randint(0, 189_000_000))
            return moment.isoformat().replace("+00:00", "Z")
        if fmt == "email":
            return f"{self.rng.choice(_WORDS)}@example.org"
        if fmt in {"uri", "url"}:
            return f"https://example.org/{self.rng.choice(_WORDS)}"
        if fmt == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return None

    def array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        prefix = [self.value(item, depth + 1) for item in schema.get("prefixItems", [])]
        low = max(int(schema.get("minItems", 0)), len(prefix))
        high = int(schema.get("maxItems", low + 3))
        # At least one item where the schema allows one: an empty list is valid but says nothing, and an
        # answer a pipeline runs on should reach what its items feed (a specialist with no claim at all).
        fewest = max(low, min(1, high))
        count = low if depth >= _MAX_DEPTH else self.rng.randint(fewest, max(fewest, min(high, low + 2)))
        items = schema.get("items")
        if count > len(prefix) and not isinstance(items, Mapping):
            return prefix  # prefixItems with items: false, or no item schema at all
        values, seen = prefix, {json.dumps(v, sort_keys=True, default=str) for v in prefix}
        for _ in range(count * _ATTEMPTS):
            if len(values) >= count:
                break
            assert isinstance(items, Mapping)
            candidate = self.value(items, depth + 1)
            key = json.dumps(candidate, sort_keys=True, default=str)
            if schema.get("uniqueItems") and key in seen:
                continue
            seen.add(key)
            values.append(candidate)
        if len(values) < low:
            raise UnsupportedSchema(f"cannot find {low} distinct items for {schema!r}")
        return values

    def object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        result = {
            name: self.value(sub, depth + 1)
            for name, sub in properties.items()
            if name in required or depth < _MAX_DEPTH
        }
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not properties:
            for index in range(int(schema.get("minProperties", 1))):
                result[f"{self.rng.choice(_WORDS)}_{index + 1}"] = self.value(extra, depth + 1)
        return result


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str) -> tuple[float, bool] | None:
    """(limit, is_exclusive) for one side, the tighter of the two keywords when both are given."""
    found = [
        (float(schema[k]), k == exclusive)
        for k in (inclusive, exclusive)
        if isinstance(schema.get(k), int | float)
    ]
    if not found:
        return None
    is_lower = inclusive == "minimum"
    return max(found) if is_lower else min(found, key=lambda b: (b[0], not b[1]))


def _span(low: float | None, high: float | None) -> tuple[float, float]:
    if low is None and high is None:
        return 0, _DEFAULT_SPAN
    if low is None:
        assert high is not None
        return (high - _DEFAULT_SPAN if high < 0 else 0), high
    if high is None:
        return low, low + _DEFAULT_SPAN
    if low > high:
        raise UnsupportedSchema(f"empty range [{low}, {high}]")
    return low, high


def _within(value: float, low: tuple[float, bool] | None, high: tuple[float, bool] | None) -> bool:
    above = low is None or (value > low[0] if low[1] else value >= low[0])
    below = high is None or (value < high[0] if high[1] else value <= high[0])
    return above and below


_CLASSES = {
    "d": string.digits,
    "w": string.ascii_letters + string.digits + "_",
    "s": " ",
    "D": string.ascii_letters,
    "W": "-",
    "S": string.ascii_letters,
}
_PRINTABLE = string.ascii_letters + string.digits + " -_.,"
_OPEN_ENDED_EXTRA = 3


class _PatternWriter:
    """Writes one string matching a simple regex: literals, classes, groups, alternation, quantifiers."""

    def __init__(self, pattern: str, rng: random.Random) -> None:
        self.pattern = pattern
        self.rng = rng
        self.pos = 0

    def write(self) -> str:
        self.pos = 0
        text = self.alternation()
        if self.pos != len(self.pattern):
            raise UnsupportedSchema(f"unbalanced ')' in pattern {self.pattern!r}")
        return text

    def peek(self) -> str:
        return self.pattern[self.pos] if self.pos < len(self.pattern) else ""

    def take(self) -> str:
        char = self.peek()
        if not char:
            raise UnsupportedSchema(f"pattern {self.pattern!r} ends too early")
        self.pos += 1
        return char

    def alternation(self) -> str:
        # Generate every branch so the parser walks the whole group, then keep one of them.
        branches = [self.sequence()]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        return self.rng.choice(branches)

    def sequence(self) -> str:
        parts: list[str] = []
        while self.peek() and self.peek() not in "|)":
            atom = self.atom()
            if atom is None:
                continue
            parts.append(self.repeat(atom))
        return "".join(parts)

    def atom(self) -> list[str] | str | None:
        char = self.take()
        if char in "^$":
            return None
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class()
        if char == ".":
            return list(string.ascii_letters)
        if char == "\\":
            return self.escape()
        if char in "*+?{":
            raise UnsupportedSchema(f"quantifier without an atom in pattern {self.pattern!r}")
        return [char]

    def group(self) -> str:
        """The group's inner source, written afresh for every repetition."""
        if self.peek() == "?":
            self.take()
            kind = self.take()
            if kind == "P" and self.peek() == "<":
                while self.take() != ">":
                    pass
            elif kind != ":":
                raise UnsupportedSchema(f"look-around or flags in pattern {self.pattern!r}")
        start = self.pos
        self.alternation()
        end = self.pos
        if self.take() != ")":
            raise UnsupportedSchema(f"unbalanced '(' in pattern {self.pattern!r}")
        return self.pattern[start:end]

    def hex_escape(self) -> str:
        """The character of ``\\xHH`` (the ``\\x`` already read)."""
        digits = self.pattern[self.pos : self.pos + 2]
        if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
            raise UnsupportedSchema(f"bad \\x escape in pattern {self.pattern!r}")
        self.pos += 2
        return chr(int(digits, 16))

    def escape(self) -> list[str]:
        escaped = self.take()
        if escaped == "x":
            return [self.hex_escape()]
        if escaped in _CLASSES:
            return list(_CLASSES[escaped])
        if escaped.isalnum():
            raise UnsupportedSchema(f"escape \\{escaped} in pattern {self.pattern!r}")
        return [escaped]

    def char_class(self) -> list[str]:
        negated = self.peek() == "^"
        if negated:
            self.take()
        members: set[str] = set()
        first = True
        while first or self.peek() != "]":
            first = False
            char = self.take()
            if char == "\\":
                escaped = self.take()
                if escaped == "x":
                    char = self.hex_escape()
                else:
                    members.update(_CLASSES.get(escaped, escaped))
                    continue
            if self.peek() == "-" and self.pattern[self.pos + 1 : self.pos + 3] == "\\x":
                self.pos += 3
                end = self.hex_escape()
                members.update(chr(code) for code in range(ord(char), ord(end) + 1))
                continue
            if self.peek() == "-" and self.pattern[self.pos + 1 : self.pos + 2] not in {"]", ""}:
                self.take()
                end = self.take()
                members.update(chr(code) for code in range(ord(char), ord(end) + 1))
            else:
                members.add(char)
        self.take()
        choices = sorted(set(_PRINTABLE) - members) if negated else sorted(members)
        if not choices:
            raise UnsupportedSchema(f"empty character class in pattern {self.pattern!r}")
        return choices

    def repeat(self, atom: list[str] | str) -> str:
        low, high = 1, 1
        char = self.peek()
        if char in {"*", "+", "?"}:
            self.take()
            low = 1 if char == "+" else 0
            high = 1 if char == "?" else low + _OPEN_ENDED_EXTRA
        elif char == "{" and re.match(r"\{\d+(,\d*)?\}", self.pattern[self.pos :]):
            spec = self.pattern[self.pos + 1 : self.pattern.index("}", self.pos)]
            self.pos = self.pattern.index("}", self.pos) + 1
            head, comma, tail = spec.partition(",")
            low = int(head)
            high = int(tail) if tail else (low + _OPEN_ENDED_EXTRA if comma else low)
        if self.peek() == "?":
            self.take()  # a lazy quantifier matches the same strings
        count = self.rng.randint(low, high)
        if isinstance(atom, str):
            return "".join(_PatternWriter(atom, self.rng).write() for _ in range(count))
        return "".join(self.rng.choice(atom) for _ in range(count))
