"""The screen's figures on a page: printed by code from the run's own figures (agents.screen.display), the
same way the prompts, the report and the PDF print them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from agents.screen.display import LABELS, value_text

register = template.Library()


@register.filter
def screen_value(figures: object, metric: str) -> str:
    """``profile.figures|screen_value:"alpha_1w"`` prints that figure, or "n/a"."""
    if not isinstance(figures, Mapping):
        return "n/a"
    value: Any = figures.get(metric)
    return value_text(metric, float(value)) if isinstance(value, (int, float)) else "n/a"


@register.filter
def screen_number(value: object, metric: str) -> str:
    """A single figure: ``group.avg_alpha_1w|screen_number:"avg_alpha_1w"``."""
    return value_text(metric, float(value)) if isinstance(value, (int, float)) else "n/a"


@register.filter
def screen_label(metric: str) -> str:
    return LABELS.get(metric, metric)
