"""The direction words every workflow's check reads (agents.text.directions): the verbs of a move count,
with their word ends; words of a rate's change, of something else, of a figure's sign, and particles do
not."""

from __future__ import annotations

import pytest

from agents.text.directions import said


@pytest.mark.parametrize(
    ("text", "way"),
    [
        ("Revenue has grown over the two years.", "up"),
        ("Revenue has risen since the launch.", "up"),
        ("Free cash flow climbed.", "up"),
        ("The balance sheet strengthened.", "up"),
        ("Revenue has fallen for two years.", "down"),
        ("Shipments sank in the quarter.", "down"),
        ("Margins contracted.", "down"),
        ("A contraction in margins followed.", "down"),
        ("Pricing power eroded.", "down"),
    ],
)
def test_the_verbs_of_a_move_say_which_way(text: str, way: str) -> None:
    assert said(text) == {way}


@pytest.mark.parametrize(
    "text",
    [
        "Revenue growth was the story of the year.",  # the noun names a rate, it does not move
        "Growth slowed.",  # a rate's change: neither a level's move nor a rate's sign
        "Growth accelerated.",
        "Lower costs lifted the margin.",  # "lower" of something else
        "Higher prices met demand.",
        "Services held up.",  # particles, not directions
        "Revenue broke down by segment.",
        "The net loss narrowed.",  # a figure's sign, not its move
        "New contracts were signed.",  # the noun, not the verb
        "A fellow supplier faced fallout.",  # a word only begins like a direction word
    ],
)
def test_words_that_do_not_say_a_move_claim_no_direction(text: str) -> None:
    assert said(text) == frozenset()


def test_said_sees_both_ways_where_a_text_has_both() -> None:
    assert said("Revenue has been decreasing, suggesting a need to improve efficiency.") == {"up", "down"}
