"""The prose pattern a constrained decoder is given: digits only inside a reference to a fact the writer was
shown; catalyst dates only inside the window. The fake server answers such schemas validly, as llama-server
does."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest

from agents.deck.narrowing import slide_schema
from agents.llm.fakes.schema_example import example_for_schema
from agents.llm.schema import ids_field, strict_json_schema
from agents.memo.narrowing import as_base, iteration_schema
from agents.memo.schemas import Claim, SynthesisIteration
from agents.text.patterns import Prose, date_pattern, patterned, prose_pattern

FACT = "AAPL:revenue:FY2025"
PATTERN = prose_pattern([FACT, "AAPL:cash:FY2025"], bound=200)


@pytest.mark.parametrize(
    "text",
    [
        f"Revenue reached [[{FACT}]] in the latest fiscal year, and the services mix keeps rising.",
        "The next report and the third-quarter call are the catalysts.",
        "Hold it over the next twelve months.",
        "Margins are thin; growth is slowing.",
        "Nestlé and Société Générale: café-style résumé, naïve coöperation.",  # precomposed letters pass
    ],
)
def test_prose_with_references_and_words_matches(text: str) -> None:
    assert re.fullmatch(PATTERN, text)


@pytest.mark.parametrize(
    "text",
    [
        "Revenue grew 12% to $416 billion.",
        "Services grew 14% a year.",
        "Revenue reached [[AAPL:revenue:FY2031]].",  # an id the writer was not shown
        "USD 12,121950 in cash.",  # the 0.5B glued the brief's "12" to the year 1950 when both were admitted
        "A high alpha of 1917-09-01.",  # the 1.5B, when dates were admitted
        "A gross margin of 2025 at 2025%.",  # the 1.5B, when the run's own years were admitted
        "A 10-Q says so.",  # the 0.5B wrote "USD 10-Quarterly" when form names were admitted
        "(cites AAPL:cash:FY{FY})",  # the 1.5B faked an id's digits with braces
        "A trend of USD ⅔ more.",  # and wrote a fraction once ASCII digits were barred
        "Revenue of ３ or ٣ or Ⅻ.",  # any numeral code would withhold
        "Revenue in\ufe0f\ufe0f\ufe0f.",  # the 0.5B padded its bound with variation selectors
        'A "quoted" word.',  # a raw quote would end the JSON string the pattern sits in
        "Up 3x.",
        "The sector's own alpha residual was -" + " " * 40,  # the 1.5B padded its bound with spaces
        "The return was  small.",  # two spaces
        " A leading space.",
        "A trailing space. ",
        "A no\u2003break space run\u00a0\u00a0.",  # another space character, to pad with
        "The mean alpha residual was + \u0302 \u0302 \u0302 \u0302",  # the 1.5B padded with combining marks
        "A caret \u02c6 or a tilde \u02dc modifier.",
        "XOM moved -\u2588\u2588% this week.",  # block elements for digits
        "MMM moved - \U0001d7ea.\U0001d7d0% with an alpha residual of -\U0001d700.",  # mathematical digits
    ],
)
def test_a_typed_figure_or_an_unknown_reference_does_not_match(text: str) -> None:
    assert not re.fullmatch(PATTERN, text)


def test_the_pattern_counts_a_reference_as_one_unit_of_its_bound() -> None:
    tight = prose_pattern([FACT], bound=10)
    assert re.fullmatch(tight, "Up to [[" + FACT + "]].")  # ten units, more than ten characters
    assert not re.fullmatch(tight, "Up to the top.")  # eleven units: a space goes with what follows it
    assert re.fullmatch(tight, "Up to a top")  # ten units, eleven characters


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
    model = iteration_schema((FACT, "news:0123456789abcdef"), facts=(FACT,), window=window)
    schema = strict_json_schema(model)
    for seed in range(5):
        answer = example_for_schema(schema, seed=seed)
        checked = _strings_under_patterns(schema, answer, schema["$defs"])
        assert len(checked) >= 10  # every prose field and every catalyst date
        for pattern, text in checked:
            assert re.fullmatch(pattern, text), (pattern[:80], text)
        stored = as_base(model.model_validate(answer), SynthesisIteration)
        assert all(window[0].isoformat() <= c.date <= window[1].isoformat() for c in stored.memo.catalysts)


def test_a_decks_words_may_hold_no_digit_at_all() -> None:
    schema = strict_json_schema(slide_schema((FACT,), ("Outlook",)))
    takeaway = schema["properties"]["takeaway"]
    assert re.fullmatch(takeaway["pattern"], "Hold for twelve months: the latest year set the bar.")
    assert not re.fullmatch(takeaway["pattern"], "Hold: FY2025 set the bar.")
    assert not re.fullmatch(takeaway["pattern"], f"Revenue reached [[{FACT}]].")  # a deck cites in figures
    assert takeaway["maxLength"] == 160  # the bound OpenAI enforces beside the pattern


def test_prose_and_narrowed_fields_are_made_in_one_class() -> None:
    # A narrowed schema is made for each call, on its path: its prose patterns and its ids in one class, not
    # a patterned class and a narrowed subclass of it (each class costs its validator's build).
    model = patterned(
        Claim,
        Prose((FACT,)),
        ["statement"],
        class_name="FundamentalsClaim",
        citations=(list[str], ids_field((FACT,), min_length=1, max_length=4)),
    )
    assert model.__name__ == "FundamentalsClaim" and model.__mro__[1] is Claim
    schema = strict_json_schema(model)
    assert schema["properties"]["citations"]["items"]["enum"] == [FACT]
    assert "pattern" in schema["properties"]["statement"]
    with pytest.raises(TypeError, match="both prose and narrowed"):
        patterned(Claim, Prose(), ["statement"], statement=(str, ...))
