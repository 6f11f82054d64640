"""What a reader is shown of model prose: the analyst's numbers, dates and durations stay; a sentence with a
typed figure is withheld whole with code's note; nothing a reader sees stops in the middle of a sentence."""

from __future__ import annotations

import unicodedata

import pytest
from pydantic import BaseModel, Field

from agents.memo.schemas import SynthesisIteration
from agents.text.figures import (
    Segment,
    brief_numbers,
    removed_count,
    segments,
    withheld_sentences,
)
from agents.text.reader import paragraph
from agents.text.sentences import fit, last_whole, sentences, trim_cut
from tests.agents.memo.answers import iteration

FACT = "AAPL:revenue:FY2025"
QUESTION = "Should we add to the position over the next 12 months, up to a 5% weight?"


def shown(parts: list[Segment]) -> str:
    return "".join(part.text for part in parts)


def numerals(text: str) -> list[str]:
    return [char for char in text if unicodedata.category(char).startswith("N")]


def test_numbers_from_the_analysts_own_brief_are_not_figures() -> None:
    keep = brief_numbers(QUESTION, "Investment committee", "")
    text = "Add over the next 12 months, up to a 5% weight, as the analyst asked."
    assert segments(text, set(), keep) == [Segment("text", text)]
    assert removed_count(text, set(), keep) == 0
    # The same sentence without the brief's say-so: the 5% is the model's, and goes.
    assert removed_count(text, set()) == 1
    # Only the brief's exact figures: a 15% the analyst never wrote is still the model's.
    assert removed_count("Then a 15% weight.", set(), keep) == 1


@pytest.mark.parametrize(
    "text",
    [
        "The catalyst is on March 12, 2026, or 12 March at the latest.",
        "Earnings land on 10/30/2026 and 2026/10/30.",
        "A 3-year view: 18 months of runway and 90 trading days of data.",
        "Over the next 12 months, in the next two quarters, a twelve-month horizon.",
    ],
)
def test_dates_durations_and_counts_stay(text: str) -> None:
    assert segments(text, set()) == [Segment("text", text)]
    assert paragraph(text, set()).parts == [Segment("text", text)]


def test_a_sentence_with_a_typed_figure_is_withheld_whole_with_one_line_for_its_paragraph() -> None:
    text = f"Revenue reached [[{FACT}]]. It grew 17.35% to $3.4bn on the year. Services carry the mix."
    shown_paragraph = paragraph(text, {FACT})
    assert [part.kind for part in shown_paragraph.parts] == ["text", "fact", "text"]
    assert shown_paragraph.note == (
        "Code withheld a sentence of this paragraph: it stated a percentage and an amount the model typed, "
        "which no cited fact backs."
    )
    assert "grew" not in shown(shown_paragraph.parts) and numerals(shown_paragraph.note) == []
    assert shown(shown_paragraph.parts).endswith(". Services carry the mix.")
    assert withheld_sentences(text, {FACT}) == [["a percentage", "an amount"]]


def test_a_reference_to_a_figure_the_run_was_not_given_withholds_its_sentence() -> None:
    found = paragraph("Margins held at [[AAPL:revenue:FY2099]].", {FACT})
    assert found.parts == []
    assert (
        found.note == "Nothing of this paragraph can be shown: it referred to a figure the run was not given."
    )


def test_sentences_split_at_their_end_marks_not_inside_decimals_or_words() -> None:
    assert sentences("One. Two? Three 3.5 x! Tail") == ["One. ", "Two? ", "Three 3.5 x! ", "Tail"]
    assert last_whole("A whole one. And a cut o") == "A whole one."
    assert last_whole("No end at all") == ""


def test_fit_keeps_the_whole_sentences_that_fit_and_never_half_of_one() -> None:
    text = "The stage failed. The endpoint did not answer in time. Try again later."
    assert fit(text, 200) == text
    assert fit(text, 60) == "The stage failed. The endpoint did not answer in time."
    assert fit("A single sentence far too long for its space", 20) == "A single sentence…"


class Bounded(BaseModel):
    text: str = Field(max_length=40)
    items: list[str] = Field(max_length=3)


def test_a_string_cut_at_its_bound_ends_at_its_last_whole_sentence() -> None:
    cut = "The moat holds. Pricing power erodes whe"  # 40 characters: the decoder closed it here
    assert len(cut) == 40
    trimmed, paths = trim_cut(Bounded(text=cut, items=[]))
    assert (trimmed.text, paths) == ("The moat holds.", ["text"])
    whole, paths = trim_cut(Bounded(text="Short and finished.", items=[]))
    assert (whole.text, paths) == ("Short and finished.", [])


def test_cut_strings_inside_an_iteration_are_trimmed_and_named() -> None:
    answer = iteration().model_dump()
    cut = ("Demand holds. " * 60)[:599] + "x"  # 600 characters, the layer's bound, mid-word
    answer["analysis"]["macro"] = cut
    answer["memo"]["falsifiers"][0] = ("Gross margin contracts. " * 10)[:199] + "y"
    drafted = SynthesisIteration.model_validate(answer)
    trimmed, paths = trim_cut(drafted)
    assert paths == ["analysis.macro", "memo.falsifiers[0]"]
    assert trimmed.analysis.macro.endswith("Demand holds.") and len(trimmed.analysis.macro) < 600
    assert trimmed.memo.falsifiers[0].endswith("Gross margin contracts.")
    assert trimmed.memo.headline_thesis == drafted.memo.headline_thesis


def test_a_sentence_too_long_for_its_space_keeps_its_first_clauses_as_a_sentence() -> None:
    said = "The committee should keep the position through the next product cycle, as it has a strong base."
    assert fit(said, 90) == "The committee should keep the position through the next product cycle."
    title = "Keep the position through the next cycle, as services carry the margin"
    assert fit(title, 50) == "Keep the position through the next cycle"  # a title gets no full stop
    assert fit("Revenue, margins, cash and the buyback programme over three years", 30) == (
        "Revenue, margins, cash and…"  # no clause of four words fits: cut at a word
    )
