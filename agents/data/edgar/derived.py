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
# The steps of a bridge from revenue to net income (seed 001 T3: "bridges"), each the gap between two
# filed figures of the same fiscal year: name -> (from, to, what it is). A positive step is taken away.
BRIDGE_STEPS: dict[str, tuple[str, str, str]] = {
    "cost_of_revenue": ("revenue", "gross_profit", "Cost of revenue: revenue - gross_profit"),
    "operating_expenses": (
        "gross_profit",
        "operating_income",
        "Operating expenses: gross_profit - operating_income",
    ),
    "below_operating": (
        "operating_income",
        "net_income",
        "Tax, interest and other: operating_income - net_income",
    ),
}
# What moved net income from one fiscal year to the next (seed 001 T3's growth bridge): each step is one
# line's effect on net income, so the steps add up to the change: revenue's change, then each cost's change
# with its sign turned (a cost that rose took from net income). Each is the difference of two filed
# subtotals' changes: name -> (upper subtotal, lower subtotal or "" for revenue itself, what it is).
EARNINGS_STEPS: dict[str, tuple[str, str, str]] = {
    "ni_step_revenue": ("revenue", "", "Revenue's effect on net income: the change in revenue"),
    "ni_step_cost_of_revenue": (
        "revenue",
        "gross_profit",
        "Cost of revenue's effect on net income: the change in gross_profit less the change in revenue",
    ),
    "ni_step_operating_expenses": (
        "gross_profit",
        "operating_income",
        "Operating expenses' effect on net income: the change in operating_income less that in gross_profit",
    ),
    "ni_step_below_operating": (
        "operating_income",
        "net_income",
        "Tax, interest and other's effect on net income: the change in net_income less that in "
        "operating_income",
    ),
}
# Trailing twelve months of a flow, from the last fiscal year and the quarters filed since (10-Qs carry no
# fourth quarter of their own): FY(y) + Q1..Qk(y+1) - Q1..Qk(y).
TTM_FLOWS = ("revenue", "gross_profit", "operating_income", "net_income")
TTM_SUFFIX = "_ttm"
DERIVED_METRICS = (
    "revenue_growth_yoy",
    *MARGINS,
    "fcf",
    *BRIDGE_STEPS,
    *EARNINGS_STEPS,
    *(f"{flow}{TTM_SUFFIX}" for flow in TTM_FLOWS),
    *(f"{name}{TTM_SUFFIX}" for name in MARGINS),
)


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
        facts.extend(_margins(metrics, suffix=""))
        facts.extend(_bridge_steps(metrics))
        facts.extend(_earnings_steps(metrics, years.get(year - 1, {})))
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


def _bridge_steps(metrics: Mapping[str, Fact]) -> list[Fact]:
    steps = []
    for name, (start, end, label) in BRIDGE_STEPS.items():
        high, low = metrics.get(start), metrics.get(end)
        if high and low and high.unit == low.unit:
            steps.append(
                _derived(
                    name,
                    value=high.value - low.value,
                    inputs=(high, low),
                    derivation=f"{high.fact_id} - {low.fact_id}",
                    label=label,
                    unit=high.unit,
                )
            )
    return steps


def _earnings_steps(metrics: Mapping[str, Fact], before: Mapping[str, Fact]) -> list[Fact]:
    """The year's steps from the previous year's net income to its own, when all four subtotals were filed
    for both years in one unit: every step or none, so the steps always add up to the change."""
    names = ("revenue", "gross_profit", "operating_income", "net_income")
    now, then = [metrics.get(n) for n in names], [before.get(n) for n in names]
    if not all(now) or not all(then):
        return []
    current = {n: f for n, f in zip(names, now, strict=True) if f is not None}
    previous = {n: f for n, f in zip(names, then, strict=True) if f is not None}
    if len({f.unit for f in (*current.values(), *previous.values())}) != 1:
        return []
    steps = []
    for name, (upper, lower, label) in EARNINGS_STEPS.items():
        inputs: tuple[Fact, ...]  # the current year's first: the step is dated by it
        if not lower:  # revenue's own change
            value = current[upper].value - previous[upper].value
            inputs = (current[upper], previous[upper])
            derivation = f"{current[upper].fact_id} - {previous[upper].fact_id}"
        else:
            change_lower = current[lower].value - previous[lower].value
            value = change_lower - (current[upper].value - previous[upper].value)
            inputs = (current[lower], previous[lower], current[upper], previous[upper])
            derivation = (
                f"({current[lower].fact_id} - {previous[lower].fact_id})"
                f" - ({current[upper].fact_id} - {previous[upper].fact_id})"
            )
        steps.append(
            _derived(
                name, value=value, inputs=inputs, derivation=derivation, label=label, unit=current[upper].unit
            )
        )
    return steps


def quarterly_derived_facts(
    annual: Mapping[int, Mapping[str, Fact]], quarters: Mapping[tuple[int, str], Mapping[str, Fact]]
) -> list[Fact]:
    """Each quarter's margins, and, for the latest quarter filed, the trailing twelve months of each flow
    and their margins. ``quarters`` maps (fiscal year, "Q1".."Q4") to metric -> quarterly fact."""
    facts: list[Fact] = []
    for metrics in quarters.values():
        facts.extend(_margins(metrics, suffix=""))
    if not quarters:
        return facts
    year, latest = max(quarters)
    if latest == "Q4":
        return facts  # a fourth quarter closes a fiscal year: its twelve months are the annual figures
    count = int(latest[1])
    trailing: dict[str, Fact] = {}
    for flow in TTM_FLOWS:
        base = annual.get(year - 1, {}).get(flow)
        now = [quarters.get((year, f"Q{n}"), {}).get(flow) for n in range(1, count + 1)]
        before = [quarters.get((year - 1, f"Q{n}"), {}).get(flow) for n in range(1, count + 1)]
        parts = [base, *now, *before]
        if any(part is None for part in parts):
            continue
        known = [part for part in parts if part is not None]
        if len({part.unit for part in known}) != 1:
            continue
        added, taken = [f for f in now if f is not None], [f for f in before if f is not None]
        value = known[0].value + sum(f.value for f in added) - sum(f.value for f in taken)
        latest_quarter = added[-1]
        derivation = " + ".join([known[0].fact_id, *(f.fact_id for f in added)])
        derivation += "".join(f" - {f.fact_id}" for f in taken)
        trailing[f"{flow}{TTM_SUFFIX}"] = _derived(
            f"{flow}{TTM_SUFFIX}",
            value=value,
            inputs=(latest_quarter, *known),
            derivation=derivation,
            label=f"Trailing twelve months of {flow} to the latest quarter filed",
            unit=known[0].unit,
        ).model_copy(update={"period_start": None})
    facts.extend(trailing.values())
    facts.extend(_margins(trailing, suffix=TTM_SUFFIX))
    return facts


def _margins(metrics: Mapping[str, Fact], *, suffix: str) -> list[Fact]:
    found = []
    for name, (numerator_name, denominator_name, what) in MARGINS.items():
        numerator = metrics.get(f"{numerator_name}{suffix}")
        denominator = metrics.get(f"{denominator_name}{suffix}")
        if numerator and denominator and denominator.value != 0 and numerator.unit == denominator.unit:
            found.append(
                _derived(
                    f"{name}{suffix}",
                    value=_ratio(numerator.value, denominator.value),
                    inputs=(numerator, denominator),
                    derivation=f"{numerator.fact_id} / {denominator.fact_id}",
                    label=f"{what}: {numerator_name}{suffix} / {denominator_name}{suffix}",
                )
            )
    return found


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
