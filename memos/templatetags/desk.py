"""Formatting of code-owned numbers. Every figure on a page comes from a FactRecord through these filters."""

from __future__ import annotations

from decimal import Decimal

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memos.models import FactRecord

register = template.Library()

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
    if unit == "shares":
        return f"{value / Decimal(1_000_000):,.1f} M shares"
    return f"{value:,.4g} {unit}".strip()


@register.filter
def fact_value(fact: object) -> str:
    if not isinstance(fact, FactRecord):
        return "—"
    return format_value(fact.value, fact.unit)


@register.simple_tag
def cited(fact: object) -> SafeString:
    """The value linked to the filing that first reported it, with the fact id as its title.

    Anything that is not a FactRecord (a metric the filer does not report) shows as "not reported".
    """
    if not isinstance(fact, FactRecord):
        return mark_safe('<span class="muted">not reported</span>')
    label = (
        f"{fact.fact_id} · {fact.form} {fact.accession} filed {fact.filed}"
        if fact.accession
        else fact.fact_id
    )
    if fact.url.startswith("https://"):
        return format_html(
            '<a class="fact" href="{}" title="{}" target="_blank" rel="noopener noreferrer">{}</a>',
            fact.url,
            label,
            format_value(fact.value, fact.unit),
        )
    return format_html('<span class="fact" title="{}">{}</span>', label, format_value(fact.value, fact.unit))
