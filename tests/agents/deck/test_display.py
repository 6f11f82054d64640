"""How a deck prints a code-owned figure: shares of a whole as percents, multiples as multiples."""

from __future__ import annotations

from decimal import Decimal

from agents.deck.spec import display


def test_margins_growth_and_returns_print_as_percents_and_a_beta_as_a_multiple() -> None:
    assert display(Decimal("0.4620680246"), "pure", fact_id="AAPL:gross_margin:FY2024") == "46.2%"
    assert display(Decimal("-0.028"), "pure", fact_id="AAPL:revenue_growth_yoy:FY2023") == "-2.8%"
    assert display(Decimal("1.0204"), "pure", fact_id="AAPL:beta:2017-09-01") == "1.02"
    assert display(Decimal("391035000000"), "USD", fact_id="AAPL:revenue:FY2024") == "USD 391,035 M"
