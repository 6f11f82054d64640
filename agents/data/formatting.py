"""How a code-owned figure is written out, the same way in prompts, pages, the admin and exports."""

from __future__ import annotations

from decimal import Decimal

_CURRENCY_UNITS = {"USD", "TWD", "EUR"}


def format_value(value: Decimal, unit: str) -> str:
    """Millions for currency amounts (as filings print them), two decimals for per-share, % for percents."""
    if unit in _CURRENCY_UNITS:
        return (
            f"{unit} {value / Decimal(1_000_000):,.0f} M"
            if abs(value) >= 1_000_000
            else f"{unit} {value:,.2f}"
        )
    if "/" in unit:
        return f"{value:,.2f} {unit}"
    if unit == "percent":
        return f"{value:,.1f}%"
    if unit == "pure":  # XBRL's word for a plain ratio (a beta, a margin as a fraction): no unit to print
        return f"{value:,.4g}"
    if unit == "shares":
        return f"{value / Decimal(1_000_000):,.1f} M shares"
    return f"{value:,.4g} {unit}".strip()
