"""A bullet whose words its own figures do not bear out loses its words, keeps its figures, and the run page
says why (agents.text.figure_claims, through agents.deck.resolve): a trend word must hold at each step of the
series, and the metric named must be one the bullet shows. What a careful reader would not call wrong is left
alone."""

from __future__ import annotations

import pytest

from agents.deck.resolve import DeckFrame, claim_figures, resolve
from agents.deck.schemas import BulletDraft, DeckDraft, SlideDraft
from agents.deck.spec import Figure
from agents.text.figure_claims import read_claim
from tests.agents.deck.samples import figure

REVENUE = [figure("revenue", 2022), figure("revenue", 2023), figure("revenue", 2024)]  # fell, then rose
NET_INCOME = [figure("net_income", 2022), figure("net_income", 2024)]  # fell
SHRANK = figure("revenue_growth_yoy", 2023)  # -2.8%
GREW = figure("revenue_growth_yoy", 2024)  # +2.0%
MARGIN = figure("gross_margin", 2024)
FRAME = DeckFrame(company="Apple Inc.", ticker="AAPL", subtitle="Board")


def contradiction(text: str, figures: list[Figure]) -> str:
    """Code's reason for withholding a bullet's words beside these figures, or "" where they stand: the
    reading the resolver applies (a drafted bullet carries two figures; words may carry more)."""
    return read_claim(text, claim_figures(tuple(figures))).reason


@pytest.mark.parametrize(
    ("text", "figures", "why"),
    [
        ("Revenue growth has been strong.", [SHRANK], "every figure of it cited is below zero"),
        ("Sales grew in the year.", [SHRANK], "it says revenue went up"),
        ("Sales shrank in the year.", [GREW], "revenue growth is above zero in every figure it cites"),
        ("Net income increased over the period.", NET_INCOME, "it says net income rose at each step"),
        ("Revenue declined over the two years.", REVENUE[1:], "it rose 2.0% in FY2024 (the latest change)"),
        ("Revenue rose in FY2023.", REVENUE, "it says revenue rose into FY2023"),
        ("Revenue has fallen over the two years.", REVENUE[1:], "it says revenue fell at each step"),
        # Read at each step, not first to last: revenue fell into FY2023, then rose.
        ("Revenue has been rising.", REVENUE, "it fell 2.8% in FY2023 and rose 2.0% in FY2024"),
        ("Profit rose while revenue fell.", REVENUE + NET_INCOME, "it says net income rose"),
        # The metric named must be one the bullet shows.
        (
            "Lower costs lifted the margin.",
            NET_INCOME,
            "it names margin, but the figures it cites are net income",
        ),
        ("Cash flow carried the buyback.", REVENUE, "it names cash flow"),
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
        ("Despite strong demand, sales fell.", [SHRANK]),  # the rate is below zero: true
        (
            "Revenue fell in FY2023 while net income fell.",
            REVENUE + NET_INCOME,
        ),  # each its own way, both true
        ("Lower costs lifted the margin.", [MARGIN]),  # "lower" of something else
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
    assert notes.contradicted[0].startswith("slide 2: bullet 1: it calls revenue growth strong")
    assert "FY2023 -2.8%" in notes.contradicted[0]
