"""A figure a decoder cannot type: a JSON-schema ``pattern`` for model prose that admits digits only inside a
``[[fact id]]`` reference to a fact the writer was shown.

An endpoint that enforces the schema compiles the pattern into its decoder (llama-server turns a string's
``pattern`` into grammar rules; hosted structured outputs accept a pattern too), so the model cannot write
"grew 12%": where it reaches for a figure, the only way on is a reference (the list of ids is the run's own,
so an id cannot be made up), which code renders from the fact store, or words.

Every digit a pattern admits outside a reference is a way a model can still say a number, and a small model
finds it. Measured on the embedded models: the 0.5B wrote "USD 10-Quarterly" through the form name "10-Q"
and "12,121950" by gluing the brief's "12" to the year 1950; the 1.5B, barred from typing the alpha it
wanted, wrote "a high alpha of 1917-09-01" through an ISO date, and with only the run's own years admitted,
"a gross margin of 2025 at 2025%". So prose admits no year, date, quarter or number of the brief: the writer
says "the latest fiscal year", "twelve months" (a catalyst's date has its own field, with its own pattern).
What the pattern cannot stop (a number in words, "eight percent") code still withholds
(agents.text.figures.SPELLED), and an endpoint that ignores patterns is answered by the same code as before:
the pattern is sent in the schema, never checked against an answer, so a backend without it costs nothing.

llama.cpp drops a string's ``maxLength`` when it has a ``pattern`` (the pattern wins), so the pattern carries
the bound itself as a count of units: a character, or one whole reference, with the space before it. A unit
may be longer than one character, so a string may pass its character bound by its spaces and what its
references add; the narrowed schema allows for that (``allowance``, and twice the bound) and code cuts such
a string back to its whole sentences within the bound (agents.text.sentences.within_bounds).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

from agents.text.sentences import field_bounds

M = TypeVar("M", bound=BaseModel)

# Not a digit of any script a decoder might reach for (ASCII; superscripts and subscripts; fractions such as
# "⅔", which the 1.5B wrote as "USD ⅔ more" once ASCII digits were barred; Roman numerals; circled,
# full-width, Arabic-Indic and Devanagari digits, and the mathematical alphanumerics, whose bold digits the
# 1.5B wrote as "GE moved - 𝟪.𝟐%": code withholds any numeral, so the decoder may not write one); not a
# bracket (brackets open references) or a brace (the 1.5B faked an id's digits as "AAPL:cash:FY{FY}"); not a
# quote, a backslash or a control character: llama.cpp writes a pattern's characters into the JSON string as
# they are, so these would break the JSON.
NUMERALS = "²³¹¼-¾٠-٩۰-۹०-९⁰-⁹₀-₉⅐-↉①-⓿❶-➓０-９\U0001d400-\U0001d7ff"
# Nor an invisible character: barred from digits, the 0.5B filled its bound with variation selectors.
INVISIBLE = "\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff"
# Nor a space other than the plain one; and a plain space only between two things, one at a time: barred
# from typing the alpha it wanted, the 1.5B wrote "the sector's own alpha residual was -" and then spaces
# to the field's bound, 600 tokens of nothing at two tokens a second.
SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
# Nor a combining mark or a spacing modifier: barred from spaces too, the 1.5B padded with " ̂ ̂ ̂" (a space
# and a combining circumflex, 1,600 tokens of it). Prose needs neither: letters come precomposed.
# Box drawing, block elements and geometric shapes too: the 1.5B wrote "moved -██% this week".
MARKS = "\u02b0-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u2500-\u25ff"
WORD = "[^ 0-9" + NUMERALS + INVISIBLE + SPACES + MARKS + r'\[\]{}"\\\x00-\x1f\x7f]'
REFERENCE_EXTRA = 4  # "[[" and "]]"
MOST_REFERENCES = 6  # references one field is expected to hold, for the length allowance


def _literal(text: str) -> str:
    """``text`` as a pattern matches it literally, escaped the way every backend reads (no \\d, no \\Q)."""
    return "".join(f"\\{char}" if char in ".^$|?*+()[]{}\\/-" else char for char in text)


def prose_pattern(ids: Iterable[str], *, bound: int) -> str:
    """The pattern for a prose field of at most ``bound`` units: a character that is not a space, or a
    reference to one of ``ids``, each after at most one space (so no leading, trailing or doubled space)."""
    units = [WORD]
    references = sorted(set(ids))
    if references:
        units.append(r"\[\[(?:" + "|".join(_literal(ref) for ref in references) + r")\]\]")
    unit = "(?:" + "|".join(units) + ")"
    return "^" + unit + "(?: ?" + unit + "){0," + str(bound - 1) + "}$"


def allowance(ids: Iterable[str]) -> int:
    """Characters a field bounded by the pattern may hold beyond its bound: its references' extra length."""
    longest = max((len(ref) for ref in ids), default=0)
    return MOST_REFERENCES * (longest + REFERENCE_EXTRA)


@dataclass(frozen=True)
class Prose:
    """What one writer's prose may hold besides plain characters: references to ``refs`` (the facts it was
    shown; none for a deck, whose figures are printed by code)."""

    refs: tuple[str, ...] = ()

    def pattern(self, bound: int) -> str:
        return prose_pattern(self.refs, bound=bound)


def patterned(
    model: type[M], prose: Prose, fields: Iterable[str], *, class_name: str | None = None, **narrowed: Any
) -> type[M]:
    """``model`` with each of its string (or list-of-string) ``fields`` carrying ``prose``'s pattern in the
    schema a decoder is given, and room for what references add to its length (code cuts it back to the
    base bound: ``agents.text.sentences.within_bounds``).

    ``narrowed`` are further field overrides (``create_model``'s ``field=(type, Field)``: ids, symbols, the
    items of a list) made in the same class, named ``class_name``. Each class pydantic makes costs a
    millisecond or more to build its validator, and a narrowed schema is made for each call, on its path: a
    screen's senior analyst built four classes for a sector's schema, 4-5 ms, and builds two now."""
    extra = allowance(prose.refs)
    fields = list(fields)  # read twice below: an iterator would be empty the second time
    overrides: dict[str, Any] = dict(narrowed)
    if clash := overrides.keys() & set(fields):
        raise TypeError(f"{model.__name__}: {sorted(clash)} are both prose and narrowed")
    for name in fields:
        info = model.model_fields[name]
        bound, item_bound = field_bounds(model, name)
        if bound is not None and info.annotation is str:
            overrides[name] = (str, _prose_field(prose, bound, extra, info.description))
        elif item_bound is not None:
            item = Annotated[str, _prose_field(prose, item_bound, extra, None)]
            overrides[name] = (list[item], _list_field(info))
        else:
            raise TypeError(f"{model.__name__}.{name} is not bounded prose")
    return create_model(class_name or f"Patterned{model.__name__}", __base__=model, **overrides)


def _list_field(info: FieldInfo) -> Any:
    """The list's own bounds and description, kept as the base model declares them."""
    sizes = {type(meta).__name__: meta for meta in info.metadata}
    low = getattr(sizes.get("MinLen"), "min_length", None)
    high = getattr(sizes.get("MaxLen"), "max_length", None)
    if info.is_required():
        return Field(min_length=low, max_length=high, description=info.description)
    return Field(default_factory=list, min_length=low, max_length=high, description=info.description)


def _prose_field(prose: Prose, bound: int, extra: int, about: str | None) -> Any:
    return Field(
        min_length=1,
        max_length=2 * bound + extra,  # a unit may carry a space before it: code cuts back to ``bound``
        description=about,
        json_schema_extra={"pattern": prose.pattern(bound), "maxLength": bound},
    )


def date_pattern(first: date, last: date) -> str:
    """A pattern that admits exactly the ISO dates from ``first`` to ``last``: a decoder under it can only
    date an event inside the window code checks (a catalyst after the data's as-of date, within the
    horizon)."""
    if last < first:
        raise ValueError(f"an empty window: {first} to {last}")
    months: list[str] = []
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month):
        days = calendar.monthrange(year, month)[1]
        low = first.day if (year, month) == (first.year, first.month) else 1
        high = last.day if (year, month) == (last.year, last.month) else days
        months.append(f"{year:04d}-{month:02d}-(?:{_two_digits(low, high)})")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return "^(?:" + "|".join(months) + ")$"


def _two_digits(low: int, high: int) -> str:
    """Zero-padded numbers from ``low`` to ``high`` (1-31) as alternatives of a tens digit and a range."""
    parts = []
    for tens in range(low // 10, high // 10 + 1):
        first, last = max(low, tens * 10), min(high, tens * 10 + 9)
        units = f"{first % 10}" if first == last else f"[{first % 10}-{last % 10}]"
        parts.append(f"{tens}{units}")
    return "|".join(parts)
