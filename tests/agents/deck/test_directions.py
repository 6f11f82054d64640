"""A bullet whose words say its metric went the other way than its own figures went loses its words, keeps
its figures, and the run page says why (agents.deck.directions). What a careful reader would not call wrong
is left alone."""

from __future__ import annotations

import pytest

from agents.deck.directions import contradiction
from agents.deck.resolve import DeckFrame, resolve
from agents.deck.schemas import BulletDraft, DeckDraft, SlideDraft
from agents.deck.spec import Figure
from tests.agents.deck.samples import figure

REVENUE = [figure("revenue", 2022), figure("revenue", 2023), figure("revenue", 2024)]  # fell, then rose
NET_INCOME = [figure("net_income", 2022), figure("net_income", 2024)]  # fell
SHRANK = figure("revenue_growth_yoy", 2023)  # -2.8%
GREW = figure("revenue_growth_yoy", 2024)  # +2.0%


@pytest.mark.parametrize(
    ("text", "figures", "why"),
    [
        ("Revenue growth has been strong.", [SHRANK], "every figure it shows is below zero"),
        ("Sales grew in the year.", [SHRANK], "revenue growth went up"),
        ("Sales shrank in the year.", [GREW], "every figure it shows is above zero"),
        ("Net income increased over the period.", NET_INCOME, "its figures fell: FY2022"),
        ("Revenue declined over the two years.", REVENUE[1:], "went down, but its figures rose"),
        ("Revenue rose in FY2023.", REVENUE, "its figures fell: FY2022 USD 394,328 M to FY2023"),
        ("Revenue has fallen over the two years.", REVENUE[1:], "went down, but its figures rose"),
    ],
)
def test_words_their_own_figures_contradict_are_named(text: str, figures: list[Figure], why: str) -> None:
    assert why in contradiction(text, figures)


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("Revenue growth declined from the year before.", [SHRANK, GREW][1:]),  # one rate: no move to judge
        ("Revenue growth improved.", [SHRANK, GREW]),  # the rate rose: true
        ("Growth slowed.", [GREW]),  # of a rate that may have been higher: not judged
        ("Sales grew again.", [SHRANK, GREW]),  # not every rate below zero
        ("Revenue rose in FY2024.", REVENUE),  # the year it names, from the year before
        ("Despite strong demand, sales fell.", [SHRANK]),  # a sentence that turns says both
        ("Profit rose while revenue fell.", REVENUE + NET_INCOME),  # two metrics: each its own way
        ("Lower costs lifted the margin.", NET_INCOME),  # "lower" of something else
        ("Revenue was the largest on record.", REVENUE),  # no direction claimed
        ("New contracts carried revenue.", REVENUE[1:]),  # the noun, not "contracted"
    ],
)
def test_what_a_careful_reader_would_not_call_wrong_is_left(text: str, figures: list[Figure]) -> None:
    assert contradiction(text, figures) == ""


def test_the_resolver_keeps_the_figures_without_the_words_and_says_why() -> None:
    figures = {f.fact_id: f for f in (SHRANK, GREW, *REVENUE)}
    bullets = [
        BulletDraft(text="Revenue growth has been strong.", figures=[SHRANK.fact_id]),
        BulletDraft(text="Revenue rose in FY2024.", figures=[r.fact_id for r in REVENUE[1:]]),
    ]
    slides = [SlideDraft(section="Growth", title="Sales came back", takeaway="Up.", bullets=bullets)]
    draft = DeckDraft(title="Keep the position", thesis="Hold.", slides=slides * 3)
    frame = DeckFrame(company="Apple Inc.", ticker="AAPL", subtitle="Board")
    deck, notes = resolve(draft, figures, frame)
    misread, kept = deck.slides[1].bullets
    assert misread.text == "" and misread.figures == (SHRANK,)
    assert kept.text == "Revenue rose in FY2024."
    assert notes.contradicted[0].startswith("slide 2: bullet 1: it says revenue growth went up")
    assert "FY2023 -2.8%" in notes.contradicted[0]
