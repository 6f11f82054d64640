"""Values a PostgreSQL text or jsonb column takes: what a model wrote, or what code extracted from a file,
on its way into the database.

PostgreSQL refuses a NUL character in text ("invalid byte sequence") and in jsonb ("\\u0000 cannot be
converted to text"), and psycopg cannot encode a lone surrogate to UTF-8 at all. Either would fail the write
of a whole step for one character nobody can see (an undrawn glyph that a PDF reader read back as NUL, a
model's stray escape), and the same write would fail again on every retry. So every such value is stored
without them: a surrogate pair a decoder left split is joined into its character, a lone one is dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar, cast

T = TypeVar("T")

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` without NUL characters and lone surrogates (a split surrogate pair joined again)."""
    if not _UNSTORABLE.search(text):
        return text
    joined = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return _UNSTORABLE.sub("", joined)


def storable(value: T) -> T:
    """A JSON-able value (strings, numbers, lists, tuples, dicts, and anything else as it is) with every
    string in it, dictionary keys included, made ``storable_text``."""
    if isinstance(value, dict | list | tuple) and _clean_json(value) is not None:
        return value
    return _cleaned(value)


def storable_json(value: T) -> tuple[T, str]:
    """``storable(value)`` and its JSON, dumped once: a jsonb column can be written from the text
    (memos.jsonb.jsonb_text) where the driver would dump the value a second time (a screen's charts: 550 KB,
    10 ms a dump). Raises as ``json.dumps`` does for a value JSON cannot write."""
    if isinstance(value, dict | list | tuple):
        dumped = _clean_json(value)
        if dumped is not None:
            return value, dumped
    cleaned = _cleaned(value)
    return cleaned, json.dumps(cleaned, ensure_ascii=False)


def _clean_json(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> str | None:
    """``value``'s JSON if it certainly holds no NUL and no surrogate, read in passes of C: a step's output
    is a tree of a few thousand strings, and walking it in Python took 1-2 ms a write. JSON writes a NUL as
    the escape \\u0000, and a lone surrogate left as it is cannot be encoded to UTF-8. None for a text that
    spells that escape out, or a value JSON cannot write: those are walked instead."""
    try:
        dumped = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    if "\\u0000" in dumped:
        return None
    if dumped.isascii():
        return dumped
    try:
        dumped.encode()
    except UnicodeEncodeError:
        return None
    return dumped


def _cleaned(value: T) -> T:
    cleaned: Any
    if isinstance(value, str):
        cleaned = storable_text(value)
    elif isinstance(value, dict):
        cleaned = {_cleaned(key): _cleaned(item) for key, item in value.items()}
    elif isinstance(value, list | tuple):
        cleaned = type(value)(_cleaned(item) for item in value)
    else:
        return value
    return cast(T, cleaned)  # the same type as ``value``: only its strings changed
