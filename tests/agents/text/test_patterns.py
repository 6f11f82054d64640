"""The prose pattern a constrained decoder is given: digits only inside a reference to a fact the writer was
shown, a year or a date, a quarter, or the brief's own numbers; catalyst dates only inside the window. The
fake server answers such schemas validly, as llama-server does."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest

from agents.deck.narrowing import slide_schema
from agents.llm.fakes.schema_example import example_for_schema
from agents.llm.schema import strict_json_schema
from agents.memo.narrowing import as_base, iteration_schema
from agents.memo.schemas import SynthesisIteration
from agents.text.patterns import date_pattern, prose_pattern

FACT = "AAPL:revenue:FY2025"
PATTERN = prose_pattern([FACT, "AAPL:cash:FY2025"], ["12"], bound=200, years=("2025", "2026"))


@pytest.mark.parametrize(
    "text",
    [
        f"Revenue reached [[{FACT}]] in FY2025, and the services mix keeps rising.",
        "The report due in 2026 and the Q3 call are the catalysts.",
        "Hold it over the next 12 months.",
        "Margins are thin; growth is slowing.",
    ],
)
def test_prose_with_references_dates_quarters_and_the_briefs_numbers_matches(text: str) -> None:
    assert re.fullmatch(PATTERN, text)


@pytest.mark.parametrize(
    "text",
    [
        "Revenue grew 12% to $416 billion.",  # a figure typed: "12" is the brief's, the rest is not
        "Services grew 14% a year.",
        "Revenue reached [[AAPL:revenue:FY2031]].",  # an id the writer was not shown
        "USD 12,122025 in cash.",  # the brief's number glued to a year: no digit may follow a digit unit
        "A high alpha of 2026-09-01.",  # a date is a way to type digits: prose has none (catalysts do)
        "A high alpha of 1917.",  # nor a year the run does not speak of
        "A 10-Q says so.",  # nor a form name: the 0.5B model wrote "USD 10-Quarterly"
        'A "quoted" word.',  # a raw quote would end the JSON string the pattern sits in
        "Up 3x.",
    ],
)
def test_a_typed_figure_or_an_unknown_reference_does_not_match(text: str) -> None:
    assert not re.fullmatch(PATTERN, text)


def test_the_pattern_counts_a_reference_as_one_unit_of_its_bound() -> None:
    tight = prose_pattern([FACT], [], bound=10, years=("2025",))
    assert re.fullmatch(tight, "Up to [[" + FACT + "]].")  # ten units, more than ten characters
    assert not re.fullmatch(tight, "Up to the top.")  # fourteen units


def test_the_date_pattern_admits_exactly_the_days_of_the_window() -> None:
    first, last = date(2026, 1, 31), date(2027, 2, 28)
    pattern = date_pattern(first, last)
    day = first - timedelta(days=40)
    while day < last + timedelta(days=40):
        assert bool(re.fullmatch(pattern, day.isoformat())) == (first <= day <= last), day
        day += timedelta(days=1)
    assert not re.fullmatch(pattern, "2026-02-30")  # the shape of a date, not a day of the calendar


def _strings_under_patterns(
    schema: dict[str, Any], value: Any, defs: dict[str, Any]
) -> list[tuple[str, str]]:
    if "$ref" in schema:
        return _strings_under_patterns(defs[schema["$ref"].split("/")[-1]], value, defs)
    for option in schema.get("anyOf", []):
        if value is None and option.get("type") == "null":
            return []
        if value is not None and option.get("type") != "null":
            return _strings_under_patterns(option, value, defs)
    if isinstance(value, dict):
        return [
            found
            for name, item in value.items()
            for found in _strings_under_patterns(schema["properties"][name], item, defs)
        ]
    if isinstance(value, list):
        return [found for item in value for found in _strings_under_patterns(schema["items"], item, defs)]
    if isinstance(value, str) and "pattern" in schema:
        return [(schema["pattern"], value)]
    return []


def test_the_fake_server_answers_a_patterned_schema_validly() -> None:
    window = (date(2026, 2, 1), date(2027, 1, 30))
    model = iteration_schema((FACT, "news:0123456789abcdef"), facts=(FACT,), keep=("12",), window=window)
    schema = strict_json_schema(model)
    for seed in range(5):
        answer = example_for_schema(schema, seed=seed)
        checked = _strings_under_patterns(schema, answer, schema["$defs"])
        assert len(checked) >= 10  # every prose field and every catalyst date
        for pattern, text in checked:
            assert re.fullmatch(pattern, text), (pattern[:80], text)
        stored = as_base(model.model_validate(answer), SynthesisIteration)
        assert all(window[0].isoformat() <= c.date <= window[1].isoformat() for c in stored.memo.catalysts)


def test_a_decks_words_may_hold_no_digit_but_years_and_the_briefs_numbers() -> None:
    schema = strict_json_schema(slide_schema((FACT,), ("Outlook",), ("12",)))
    takeaway = schema["properties"]["takeaway"]
    assert re.fullmatch(takeaway["pattern"], "Hold for 12 months: FY2025 set the bar.")
    assert not re.fullmatch(takeaway["pattern"], "Hold: FY2019 set the bar.")  # no figure of the run's
    assert not re.fullmatch(takeaway["pattern"], f"Revenue reached [[{FACT}]].")  # a deck cites in figures
    assert takeaway["maxLength"] == 160  # the bound OpenAI enforces beside the pattern
