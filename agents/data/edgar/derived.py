"""Figures computed by code from filed facts: each names its formula and the fact ids it used.

Ratios (margins, growth) are pure numbers (0.4621 is 46.21 %), unit ``"pure"``, rounded half-even to
10 decimal places, the precision the fact store keeps. Free cash flow is exact, in the filer's currency.
Nothing is derived across a gap: growth needs the fiscal year immediately before, with positive revenue.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from agents.data.types import Citation, Fact

RATIO_UNIT = "pure"
RATIO_QUANTUM = Decimal("1e-10")

# name -> (numerator metric, denominator metric, what it is)
MARGINS: dict[str, tuple[str, str, str]] = {
    "gross_margin": ("gross_profit", "revenue", "Gross margin"),
    "operating_margin": ("operating_income", "revenue", "Operating margin"),
    "net_margin": ("net_income", "revenue", "Net margin"),
}
DERIVED_METRICS = ("revenue_growth_yoy", *MARGINS, "fcf")


def annual_derived_facts(years: Mapping[int, Mapping[str, Fact]]) -> list[Fact]:
    """Derived facts for every fiscal year in ``years`` (fiscal year -> metric -> annual fact)."""
    facts: list[Fact] = []
    for year, metrics in sorted(years.items()):
        current = metrics.get("revenue")
        previous = years.get(year - 1, {}).get("revenue")
        if current and previous and previous.value > 0:
            facts.append(
                _derived(
                    "revenue_growth_yoy",
                    value=_ratio(current.value, previous.value, less=1),
                    inputs=(current, previous),
                    derivation=f"{current.fact_id} / {previous.fact_id} - 1",
                    label="Revenue growth on the previous fiscal year",
                )
            )
        for name, (numerator_name, denominator_name, what) in MARGINS.items():
            numerator, denominator = metrics.get(numerator_name), metrics.get(denominator_name)
            if numerator and denominator and denominator.value != 0 and numerator.unit == denominator.unit:
                facts.append(
                    _derived(
                        name,
                        value=_ratio(numerator.value, denominator.value),
                        inputs=(numerator, denominator),
                        derivation=f"{numerator.fact_id} / {denominator.fact_id}",
                        label=f"{what}: {numerator_name} / {denominator_name}",
                    )
                )
        operating, capex = metrics.get("operating_cash_flow"), metrics.get("capex")
        if operating and capex and operating.unit == capex.unit:
            facts.append(
                _derived(
                    "fcf",
                    value=operating.value - capex.value,
                    inputs=(operating, capex),
                    derivation=f"{operating.fact_id} - {capex.fact_id}",
                    label="Free cash flow: operating_cash_flow - capex",
                    unit=operating.unit,
                )
            )
    return facts


def _ratio(numerator: Decimal, denominator: Decimal, *, less: int = 0) -> Decimal:
    """``numerator / denominator - less``, rounded once, whatever the caller's decimal context."""
    with localcontext() as context:
        context.prec = 34
        context.rounding = ROUND_HALF_EVEN
        return (numerator / denominator - less).quantize(RATIO_QUANTUM)


def _derived(
    metric: str,
    *,
    value: Decimal,
    inputs: tuple[Fact, ...],
    derivation: str,
    label: str,
    unit: str = RATIO_UNIT,
) -> Fact:
    """A fact for the same company and period as its first input."""
    first = inputs[0]
    period = first.fact_id.rsplit(":", 1)[1]
    return Fact(
        fact_id=f"{first.ticker}:{metric}:{period}",
        ticker=first.ticker,
        metric=metric,
        value=value,
        unit=unit,
        period_start=first.period_start,
        period_end=first.period_end,
        fiscal_year=first.fiscal_year,
        fiscal_period=first.fiscal_period,
        citation=Citation(source="derived", url=first.citation.url, label=label),
        derivation=derivation,
        inputs=tuple(fact.fact_id for fact in inputs),
    )
