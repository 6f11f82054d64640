"""Code resolves a number the model typed when exactly one fact it was given backs it: the value at the typed
rounding, the unit, the period and the metric's name in the sentence. Anything else stays typed, and the
sentence stays withheld."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.text.repair import Writer, resolve
from agents.text.resolution import Printed, resolve_typed

REVENUE = Printed("AAPL:revenue:FY2025", Decimal("416161000000"), "USD", "FY2025", "revenue")
REVENUE_2024 = Printed("AAPL:revenue:FY2024", Decimal("391035000000"), "USD", "FY2024", "revenue")
CASH = Printed("AAPL:cash:FY2025", Decimal("35934000000"), "USD", "FY2025", "cash")
EQUITY = Printed(
    "AAPL:stockholders_equity:FY2025", Decimal("73733000000"), "USD", "FY2025", "stockholders_equity"
)
MARGIN = Printed("AAPL:gross_margin:FY2025", Decimal("0.4621"), "pure", "FY2025", "gross_margin")
GROWTH = Printed("AAPL:revenue_growth_yoy:FY2025", Decimal("6.43"), "percent", "FY2025", "revenue_growth_yoy")
EPS = Printed("AAPL:eps_diluted:FY2025", Decimal("7.46"), "USD/shares", "FY2025", "eps_diluted")
BETA = Printed("AAPL:beta:2026-01-30", Decimal("1.2345"), "pure", "as of 2026-01-30", "beta")
FACTS = (REVENUE, REVENUE_2024, CASH, EQUITY, MARGIN, GROWTH, EPS, BETA)


@pytest.mark.parametrize(
    ("typed", "fact"),
    [
        # An amount at every rounding a fact is printed at: the desk's millions, billions, a bare figure
        # as the prompt listed it, a currency symbol or code.
        ("Revenue reached USD 416,161 million.", REVENUE),
        ("Revenue reached USD 416,161 M.", REVENUE),
        ("Revenue reached $416.2 billion.", REVENUE),
        ("Revenue reached $416 billion.", REVENUE),
        ("Revenue reached 416.16bn dollars.", REVENUE),
        ("Revenue of 416,161 is the base.", REVENUE),
        ("Cash stood at $35.9bn.", CASH),
        # A ratio printed as a percent (one decimal, or whole), a percent fact, a per-share amount, a
        # multiple.
        ("The gross margin held at 46.2%.", MARGIN),
        ("The gross margin held near 46%.", MARGIN),
        ("Revenue growth was 6.4 percent.", GROWTH),
        ("Diluted EPS came in at $7.46.", EPS),
        ("A beta of 1.23 says it moves with the market.", BETA),
    ],
)
def test_a_typed_number_a_fact_backs_becomes_that_facts_reference(typed: str, fact: Printed) -> None:
    resolved = resolve_typed(typed, FACTS)
    assert resolved.replaced == (fact.fact_id,)
    assert f"[[{fact.fact_id}]]" in resolved.text
    assert not any(char.isdigit() for char in resolved.text.replace(f"[[{fact.fact_id}]]", ""))


@pytest.mark.parametrize(
    "typed",
    [
        "Revenue reached $0.4 trillion.",  # coarser than the desk ever prints an amount
        "Revenue reached $417 billion.",  # not the value at that rounding
        "Revenue reached 416,161 percent.",  # the unit disagrees: a percentage is no amount
        "The gross margin held at 0.46.",  # a ratio is not typed as its bare fraction at two digits
        "Total assets were USD 73,733 million.",  # the right number, the wrong words: equity is not named
        "Revenue reached $391 billion in 2025.",  # FY2024's figure, but the sentence names 2025
        "Services grew 14% a year.",  # no fact backs it at all
        "Margins expand 35bps a year.",  # a change in basis points is no single fact
    ],
)
def test_a_number_no_single_fact_backs_stays_typed(typed: str) -> None:
    resolved = resolve_typed(typed, FACTS)
    assert resolved.replaced == ()
    assert resolved.text == typed


def test_the_period_a_sentence_names_picks_the_fact_and_two_candidates_resolve_nothing() -> None:
    twins = (REVENUE, Printed("AAPL:revenue:FY2025Q4", Decimal("416161000000"), "USD", "FY2025Q4", "revenue"))
    assert resolve_typed("Revenue reached $416.2 billion.", twins).replaced == ()  # which one? neither
    named = resolve_typed("Revenue reached $391.0 billion in FY2024 and $416.2 billion in FY2025.", FACTS)
    assert named.replaced == (REVENUE_2024.fact_id, REVENUE.fact_id)


def test_the_analysts_own_numbers_and_years_are_left_alone() -> None:
    text = "Over the next 12 months, revenue of $416.2 billion in 2025 must hold."
    resolved = resolve_typed(text, FACTS, keep=frozenset({"12"}))
    assert resolved.text == f"Over the next 12 months, revenue of [[{REVENUE.fact_id}]] in 2025 must hold."


def test_resolve_counts_the_sentences_it_made_whole_and_leaves_the_others_withheld() -> None:
    writer = Writer(known=frozenset(fact.fact_id for fact in FACTS), facts=FACTS)
    texts, repaired = resolve(["Cash stood at $35.9bn. Services grew 14% a year."], writer)
    assert repaired == 1
    assert texts == [f"Cash stood at [[{CASH.fact_id}]]. Services grew 14% a year."]
    assert writer.withholds("Services grew 14% a year.")
    # A sentence whose every number resolved is shown; one with a number left is not made "whole".
    texts, repaired = resolve(["Cash stood at $35.9bn while services grew 14% a year."], writer)
    assert repaired == 0 and writer.withholds(texts[0])
