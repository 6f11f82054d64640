"""A fiscal year or quarter is spelled in one place (agents.data.types.period_label): in a fact's id, on the
desk's pages and prompts (memos.pipeline.evidence.fact_period), and where the deck reads it back."""

from __future__ import annotations

from agents.data.edgar.factset import fact_id
from agents.data.types import period_label
from tests.agents.deck.samples import figure


def test_a_year_and_a_quarter_are_spelled_as_their_fact_ids_spell_them() -> None:
    assert period_label(2024, "FY") == "FY2024"
    assert period_label(2025, "Q3") == "FY2025Q3"
    assert fact_id("AAPL", "revenue", 2025, "Q3") == "AAPL:revenue:FY2025Q3"


def test_the_deck_reads_a_label_back_to_its_year_and_quarter() -> None:
    quarter = figure("revenue", 2024).model_copy(update={"period": period_label(2025, "Q3")})
    year = figure("revenue", 2024).model_copy(update={"period": period_label(2024, "FY")})
    assert (quarter.fiscal, year.fiscal) == ((2025, 3), (2024, 0))
