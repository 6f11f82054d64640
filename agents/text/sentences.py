"""Text a reader sees ends where a sentence ends.

A model's string that reached its schema bound was closed by the decoder's grammar, wherever it was: such a
string is cut back to its last whole sentence (``trim_cut``). Text code shows in a bounded space keeps the
whole sentences that fit (``fit``). Neither ever stops in the middle of a sentence when a whole one exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeVar, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

M = TypeVar("M", bound=BaseModel)

# A sentence ends at . ! ? or … (after any closing quote or bracket) followed by a blank or the end. A dot
# between digits or inside an abbreviation-like token ("U.S.", "3.5") is followed by no blank, so it is not
# an end.
_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s|$)")
# Closing a text this way counts as finished: a sentence end, or a list-like fragment without a verb
# ("Next quarterly report") that the schema asks for.
_FINISHED = re.compile(r"[.!?…][\"'”’)\]]*\s*$")
ELLIPSIS = "…"


# A dot that ends an abbreviation, not a sentence: "Apple Inc. reported", "the U.S. market", "e.g. cloud".
# Split there, a paragraph about "Apple Inc." read as a run of two-word sentences.
_ABBREVIATION = re.compile(
    r"(?:\b(?:Inc|Corp|Co|Ltd|Plc|Mr|Mrs|Ms|Dr|St|vs|approx|No|Jr|Sr)|\b(?:[A-Za-z]\.)+[A-Za-z])$"
)


def sentences(text: str) -> list[str]:
    """The text's sentences, each with its end mark and the blank after it; the tail without an end mark
    (if any) is the last item."""
    out: list[str] = []
    start = 0
    for match in _END.finditer(text):
        if match.group(0) == "." and _ABBREVIATION.search(text, 0, match.start()):
            continue
        end = match.end()
        while end < len(text) and text[end].isspace():
            end += 1
        out.append(text[start:end])
        start = end
    if start < len(text):
        out.append(text[start:])
    return out


def without(text: str, why: Callable[[str], str]) -> tuple[str, list[tuple[str, str]]]:
    """``text`` less each sentence ``why`` gives a reason for, and each withheld sentence with its reason;
    ``text`` unchanged when none is withheld."""
    kept: list[str] = []
    withheld: list[tuple[str, str]] = []
    for sentence in sentences(text):
        reason = why(sentence)
        if reason:
            withheld.append((sentence, reason))
        else:
            kept.append(sentence)
    return ("".join(kept).strip() if withheld else text), withheld


def is_finished(text: str) -> bool:
    return bool(_FINISHED.search(text))


def last_whole(text: str) -> str:
    """The text up to its last sentence end ("" when it has none)."""
    parts = sentences(text)
    whole = parts if not parts or is_finished(parts[-1]) else parts[:-1]
    return "".join(whole).rstrip()


def fit(text: str, limit: int) -> str:
    """The whole sentences of ``text`` that fit in ``limit`` characters. When not even the first sentence
    fits, its first clauses that do, ended as a sentence; only when none does is it shortened, at a word,
    with an ellipsis."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in sentences(text):
        if len((kept + sentence).rstrip()) > limit:
            break
        kept += sentence
    if kept.strip():
        return kept.rstrip()
    clause = _first_clauses(text, limit)
    if clause:
        return clause
    words = text[: max(0, limit - 1)].rsplit(" ", 1)[0].rstrip(" ,;:—–-")
    return words + ELLIPSIS


_CLAUSE_END = re.compile(r"[,;:]\s|\s[—–-]\s")
MIN_CLAUSE_WORDS = 4


def _first_clauses(text: str, limit: int) -> str:
    """The text up to its last clause break (a comma, a semicolon, a colon, a dash) that fits in ``limit``
    with a full stop, when at least four words come before it: "The committee should keep the position
    through the next product cycle." rather than "..., as it has a…". A text with no end mark (a title) gets
    none; "" when no such break fits."""
    first = sentences(text)
    end = "." if first and is_finished(first[0]) else ""
    breaks = [m.start() for m in _CLAUSE_END.finditer(text) if m.start() + len(end) <= limit]
    for at in reversed(breaks):
        head = text[:at].rstrip(" ,;:—–-")
        if len(head.split()) >= MIN_CLAUSE_WORDS:
            return head + end
    return ""


def _bound(metadata: Iterable[Any]) -> int | None:
    for item in metadata:
        if isinstance(item, MaxLen):
            return int(item.max_length)
        if isinstance(item, FieldInfo) and (inner := _bound(item.metadata)) is not None:
            return inner
    return None


def field_bounds(model: type[BaseModel], name: str) -> tuple[int | None, int | None]:
    """The field's own length bound, and (for a list of strings) each item's."""
    field = model.model_fields[name]
    item_bound = None
    args = get_args(field.annotation)
    if get_origin(field.annotation) is list and args and get_origin(args[0]) is Annotated:
        item_bound = _bound(get_args(args[0])[1:])
    return _bound(field.metadata), item_bound


def trim_cut(value: M) -> tuple[M, list[str]]:
    """``value`` with every string that reached its bound without finishing a sentence cut back to its last
    whole sentence (a string with no whole sentence is left as it is), and the paths of what was cut."""
    trimmed: list[str] = []
    result = _trim(value, "", trimmed)
    assert isinstance(result, type(value))
    return result, trimmed


def _trim(value: Any, path: str, trimmed: list[str]) -> Any:
    if isinstance(value, BaseModel):
        updates: dict[str, Any] = {}
        for name in type(value).model_fields:
            current = getattr(value, name)
            here = f"{path}.{name}" if path else name
            bound, item_bound = field_bounds(type(value), name)
            new: Any
            if isinstance(current, str) and bound is not None:
                new = _trim_text(current, bound)
                if new != current:
                    trimmed.append(here)
            elif isinstance(current, list) and item_bound is not None:
                new = [_trim_text(item, item_bound) if isinstance(item, str) else item for item in current]
                trimmed += [
                    f"{here}[{i}]" for i, (a, b) in enumerate(zip(new, current, strict=True)) if a != b
                ]
                new = new if new != current else current
            else:
                new = _trim(current, here, trimmed)
            if new is not current:
                updates[name] = new
        return value.model_copy(update=updates) if updates else value
    if isinstance(value, list):
        items = [_trim(item, f"{path}[{index}]", trimmed) for index, item in enumerate(value)]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _trim_text(text: str, bound: int) -> str:
    if len(text) < bound or is_finished(text):
        return text
    whole = last_whole(text)
    return whole or text


def within_bounds(model: type[BaseModel], data: Any) -> Any:
    """``data`` (a model's dump) with every string longer than ``model`` allows cut back to the whole
    sentences that fit (``fit``): what a decoder wrote under a pattern that counts a reference as one unit
    (agents.text.patterns) may pass the character bound its base schema keeps."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for name, info in model.model_fields.items():
        value = out.get(name)
        bound, item_bound = field_bounds(model, name)
        inner = _model_in(info.annotation)
        if isinstance(value, str) and bound is not None and len(value) > bound:
            out[name] = fit(value, bound)
        elif isinstance(value, list) and item_bound is not None:
            out[name] = [fit(item, item_bound) if isinstance(item, str) else item for item in value]
        elif isinstance(value, list) and inner is not None:
            out[name] = [within_bounds(inner, item) for item in value]
        elif isinstance(value, dict) and inner is not None:
            out[name] = within_bounds(inner, value)
    return out


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: itself, a list of it, or it or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _sent_bound(metadata: Iterable[Any], extra: Any = None) -> int | None:
    """The bound a decoder was sent for a string: the schema's ``maxLength`` where a pattern's allowance
    widened the validator's (agents.text.patterns), else the validator's own ``max_length``."""
    if isinstance(extra, dict) and isinstance(extra.get("maxLength"), int):
        return int(extra["maxLength"])
    for item in metadata:
        if isinstance(item, FieldInfo):
            found = _sent_bound(item.metadata, item.json_schema_extra)
            if found is not None:
                return found
    return _bound(metadata)


def bounded(value: M) -> M:
    """``value`` with every string longer than the bound its schema sent cut back, at that moment, to the
    whole sentences that fit (``fit``): an answer that its sent schema admits then fits its base model too, so
    nothing that reads it back later under the stricter model can fail on its length."""
    updates: dict[str, Any] = {}
    for name, info in type(value).model_fields.items():
        current = getattr(value, name)
        new: Any = current
        if isinstance(current, str):
            bound = _sent_bound(info.metadata, info.json_schema_extra)
            new = fit(current, bound) if bound is not None and len(current) > bound else current
        elif isinstance(current, list):
            args = get_args(info.annotation)
            item_bound = (
                _sent_bound(get_args(args[0])[1:]) if args and get_origin(args[0]) is Annotated else None
            )
            items = [
                fit(item, item_bound)
                if isinstance(item, str) and item_bound is not None and len(item) > item_bound
                else bounded(item)
                if isinstance(item, BaseModel)
                else item
                for item in current
            ]
            new = items if any(a is not b for a, b in zip(items, current, strict=True)) else current
        elif isinstance(current, BaseModel):
            new = bounded(current)
        if new is not current:
            updates[name] = new
    return value.model_copy(update=updates) if updates else value
