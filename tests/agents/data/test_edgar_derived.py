"""Derived facts: computed by code, named by formula, traceable to the filed facts they used."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.data.edgar import DERIVED_METRICS, CompanyFactSet, facts_from_companyfacts, read_companyfacts_file
from agents.data.edgar.derived import EARNINGS_STEPS
from agents.data.types import Fact
from tests.agents.data import shared_file

TEN_PLACES = Decimal("1e-10")


@pytest.fixture(scope="module")
def aapl_set() -> CompanyFactSet:
    payload = read_companyfacts_file(shared_file("edgar/companyfacts/CIK0000320193_AAPL.json.gz"))
    return facts_from_companyfacts(payload, ticker="AAPL")


@pytest.fixture(scope="module")
def aapl(aapl_set: CompanyFactSet) -> dict[str, Fact]:
    return aapl_set.facts_by_id()


def test_margins_equal_the_arithmetic_on_their_inputs(aapl: dict[str, Fact]) -> None:
    revenue = aapl["AAPL:revenue:FY2024"]
    for metric, numerator_metric in [
        ("gross_margin", "gross_profit"),
        ("operating_margin", "operating_income"),
        ("net_margin", "net_income"),
    ]:
        margin = aapl[f"AAPL:{metric}:FY2024"]
        numerator = aapl[f"AAPL:{numerator_metric}:FY2024"]
        assert margin.value == (numerator.value / revenue.value).quantize(TEN_PLACES)
        assert margin.inputs == (numerator.fact_id, revenue.fact_id)
        assert margin.derivation == f"{numerator.fact_id} / {revenue.fact_id}"
        assert margin.unit == "pure"
    assert aapl["AAPL:gross_margin:FY2024"].value == Decimal("0.4620634982")


def test_revenue_growth_compares_with_the_previous_fiscal_year(aapl: dict[str, Fact]) -> None:
    growth = aapl["AAPL:revenue_growth_yoy:FY2024"]
    assert growth.value == (Decimal(391035000000) / Decimal(383285000000) - 1).quantize(TEN_PLACES)
    assert growth.inputs == ("AAPL:revenue:FY2024", "AAPL:revenue:FY2023")
    assert growth.derivation == "AAPL:revenue:FY2024 / AAPL:revenue:FY2023 - 1"
    # The first year has nothing to grow from.
    assert "AAPL:revenue_growth_yoy:FY2007" not in aapl


def test_free_cash_flow_is_exact_in_the_filers_currency(aapl: dict[str, Fact]) -> None:
    fcf = aapl["AAPL:fcf:FY2024"]
    operating, capex = aapl["AAPL:operating_cash_flow:FY2024"], aapl["AAPL:capex:FY2024"]
    assert fcf.value == operating.value - capex.value == 108807000000
    assert fcf.unit == "USD"
    assert fcf.inputs == (operating.fact_id, capex.fact_id)


def test_derived_facts_cite_the_first_inputs_filing_and_have_its_period(aapl: dict[str, Fact]) -> None:
    margin = aapl["AAPL:net_margin:FY2024"]
    net_income = aapl["AAPL:net_income:FY2024"]
    assert margin.citation.source == "derived"
    assert margin.citation.url == net_income.citation.url
    assert (margin.citation.accession, margin.citation.concept) == (None, None)
    assert (margin.period_start, margin.period_end, margin.fiscal_period) == (
        net_income.period_start,
        net_income.period_end,
        "FY",
    )


def test_every_derived_fact_names_inputs_that_exist_in_the_set(
    aapl_set: CompanyFactSet, aapl: dict[str, Fact]
) -> None:
    derived = [fact for fact in aapl_set.facts if fact.citation.source == "derived"]
    assert {fact.metric for fact in derived} == set(DERIVED_METRICS)
    for fact in derived:
        assert fact.inputs
        # Each input is in the set, and every chain of inputs ends in filed figures (a trailing margin is
        # computed from trailing sums, each from filed annual and quarterly figures).
        pending = list(fact.inputs)
        while pending:
            source = aapl[pending.pop()]
            assert source.citation.source in {"sec-companyfacts", "derived"}
            pending.extend(source.inputs)
        assert all(input_id in fact.derivation for input_id in fact.inputs)
        # The fact store keeps 10 decimal places; a derived value must fit it exactly.
        assert fact.value == fact.value.quantize(TEN_PLACES)


def test_the_steps_from_last_year_s_net_income_add_up_to_this_year_s(aapl: dict[str, Fact]) -> None:
    """Apple FY2025: revenue's change, then each cost's effect (a cost that rose takes away), from the
    filed subtotals of both years."""
    steps = [aapl[f"AAPL:{name}:FY2025"] for name in EARNINGS_STEPS]
    before, after = aapl["AAPL:net_income:FY2024"], aapl["AAPL:net_income:FY2025"]
    assert before.value + sum(step.value for step in steps) == after.value
    revenue = aapl["AAPL:revenue:FY2025"].value - aapl["AAPL:revenue:FY2024"].value
    assert steps[0].value == revenue == Decimal("25126000000")  # 416,161 - 391,035 M
    gross = aapl["AAPL:gross_profit:FY2025"].value - aapl["AAPL:gross_profit:FY2024"].value
    assert steps[1].value == gross - revenue  # cost of revenue rose: a negative effect
    assert steps[1].value < 0 and steps[1].unit == "USD" and steps[1].period_end == after.period_end
    assert steps[1].derivation == (
        "(AAPL:gross_profit:FY2025 - AAPL:gross_profit:FY2024) - (AAPL:revenue:FY2025 - AAPL:revenue:FY2024)"
    )
