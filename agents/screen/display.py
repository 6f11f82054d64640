"""How the screen prints its figures, the same in prompts, pages, the report and the PDF: returns and alphas
as signed percentages, distances to the averages as signed percentages, RSI and the volatility index as
levels, %B and beta as ratios, volume as a multiple. Only code prints a figure; a model names it by id."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from agents.screen.quant import Figure
from agents.text.figures import REF

LABELS = {
    "return_1w": "return, 1 week",
    "beta": "beta",
    "alpha_1w": "alpha residual, 1 week",
    "sma50_distance_pct": "price against the 50-day average",
    "sma200_distance_pct": "price against the 200-day average",
    "rsi14": "RSI14",
    "bb_position": "Bollinger position (%B)",
    "volume_ratio": "volume against its 20-day average",
    "atr_pct": "ATR, % of price",
    "close": "close",
    "avg_return_1w": "mean return, 1 week",
    "avg_alpha_1w": "mean alpha residual, 1 week",
    "candidates": "candidates",
    "sectors": "sectors",
    "largest_sector_share": "largest sector's share of the candidates",
    "hhi": "sector concentration (HHI)",
    "share_green": "share flagged GREEN",
    "share_yellow": "share flagged YELLOW",
    "share_red": "share flagged RED",
    "review_share_green": "share flagged GREEN before the review",
    "review_share_yellow": "share flagged YELLOW before the review",
    "review_share_red": "share flagged RED before the review",
}


def metric_of(fact_id: str) -> str:
    return fact_id.split(":")[-2]


def subject_of(fact_id: str) -> str:
    """XOM for ``XOM:rsi14:...``; the sector's slug for ``sector:<slug>:avg_alpha_1w:...``; "watchlist" for
    ``watchlist:hhi:...``."""
    parts = fact_id.split(":")
    return parts[1] if parts[0] == "sector" else parts[0]


# metric -> its format: a signed percentage of a ratio, or a format of the value itself.
FORMATS = {
    "return_1w": "ratio",
    "alpha_1w": "ratio",
    "avg_return_1w": "ratio",
    "avg_alpha_1w": "ratio",
    "sma50_distance_pct": "{:+.1f}%",
    "sma200_distance_pct": "{:+.1f}%",
    "atr_pct": "{:.2f}%",
    "volume_ratio": "{:.1f}x",
    "rsi14": "{:.1f}",
    "close": "{:.1f}",
    # The portfolio's (agents.screen.portfolio): counts, shares of the candidates, an index from 0 to 1.
    "candidates": "{:.0f}",
    "sectors": "{:.0f}",
    "largest_sector_share": "share",
    "share_green": "share",
    "share_yellow": "share",
    "share_red": "share",
    "review_share_green": "share",
    "review_share_yellow": "share",
    "review_share_red": "share",
    "hhi": "{:.3f}",
}


def value_text(metric: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    form = FORMATS.get(metric, "{:.2f}")
    if form == "share":
        return f"{value * 100:.1f}%"
    return f"{value * 100:+.2f}%" if form == "ratio" else form.format(value)


def figure_text(figure: Figure) -> str:
    return value_text(metric_of(figure.fact_id), figure.value)


def figure_line(figure: Figure) -> str:
    """``[XOM:alpha_1w:2015-08-21] XOM alpha residual, 1 week: -2.40%``, a line of a prompt."""
    metric = metric_of(figure.fact_id)
    label = LABELS.get(metric, metric)
    return f"[{figure.fact_id}] {subject_of(figure.fact_id)} {label}: {figure_text(figure)}"


def printed(text: str, figures: Mapping[str, Figure]) -> str:
    """``text`` with each ``[[fact id]]`` printed as its figure (an unknown one kept as its id), as plain
    text: a frozen version's sections, which are read without the dashboard."""

    def value(match: re.Match[str]) -> str:
        figure = figures.get(match.group(1))
        return figure_text(figure) if figure else f"[{match.group(1)}]"

    return REF.sub(value, text)


def figure_lines(figures: Iterable[Figure]) -> str:
    return "\n".join(figure_line(figure) for figure in figures)
