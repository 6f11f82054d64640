"""The screen's figures on a page: printed by code from the run's own figures (agents.screen.display), the
same way the prompts, the report and the PDF print them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from agents.screen.display import LABELS, figure_text, value_text
from agents.screen.quant import Figure
from memos.models import Run
from memos.pipeline.screen.desk import dashboard_of
from memos.services.access import visible_versions

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
def screen_figure(figure: object) -> str:
    """A figure code computed (agents.screen.quant.Figure), printed as the dashboard prints it."""
    return figure_text(figure) if isinstance(figure, Figure) else "n/a"


@register.filter
def screen_label(metric: str) -> str:
    return LABELS.get(metric, metric)


@register.simple_tag(takes_context=True)
def screen_run_dashboard(context: Any, run: Run) -> dict[str, Any]:
    """The dashboard of the version a finished screen run froze, if the reader may see it, with the symbol
    the inspector shows (``?symbol=``)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    version = visible_versions(user).filter(run=run).order_by("-number").first() if user else None
    dash = dashboard_of(version) if version is not None else None
    selected = dash.symbol(request.GET.get("symbol", "").upper()) if dash and request else None
    return {"dash": dash, "version": version, "selected": selected}
