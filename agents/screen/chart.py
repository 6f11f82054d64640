"""A symbol's price chart for the screen's inspector, drawn by code as inline SVG: the close over the last
``SESSIONS`` sessions to the as-of day, its 50- and 200-day simple moving averages (the quant engine's
definition, over the whole history before each day) and the benchmark rebased to the symbol's first close
in the window, so the two lines read as relative performance.

``price_chart`` takes the series (code's data); ``chart_svg`` draws what it took, so a frozen version keeps
the points and draws the same chart for good. Solid strokes, no gradients; the plot's own range (a line is
read as change), its low and high printed at the axis, the first and last date under it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from html import escape

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from agents.data.prices import PriceSeries

SESSIONS = 130  # about six months
SIGNIFICANT = 6
LINES = (  # (field, label, colour, dash)
    ("close", "close", "#6cb6ff", ""),
    ("sma50", "50-day average", "#e3b341", ""),
    ("sma200", "200-day average", "#f47067", ""),
    ("benchmark", "benchmark, rebased", "#8591a0", "4 3"),
)


class PriceChart(BaseModel):
    model_config = ConfigDict(frozen=True)

    symbol: str
    benchmark: str
    dates: list[date]
    close: list[float]
    sma50: list[float | None]
    sma200: list[float | None]
    benchmark_rebased: list[float | None]


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else float(f"{value:.{SIGNIFICANT}g}")


def price_chart(series: PriceSeries, benchmark: PriceSeries, as_of: date) -> PriceChart:
    """The chart's points, on numpy arrays: a screen draws 87 on its path, and pandas' reindexing and
    Timestamps took 1.3 ms a chart (0.55 ms now)."""
    days, close = _closes(series, as_of)
    start = max(0, len(close) - SESSIONS)
    shown, window = days[start:], close[start:]
    market_days, market_close = _closes(benchmark, as_of)
    # The benchmark's close on each of the window's days, where it has that day.
    market = np.full(len(shown), np.nan)
    if len(market_days):
        at = np.minimum(np.searchsorted(market_days, shown), len(market_days) - 1)
        market = np.where(market_days[at] == shown, market_close[at], np.nan)
    valid = np.flatnonzero(~np.isnan(market))
    rebased = market / market[valid[0]] * window[valid[0]] if len(valid) else market
    return PriceChart(
        symbol=series.ticker,
        benchmark=benchmark.ticker,
        dates=shown.astype("datetime64[D]").tolist(),
        close=[float(f"{value:.{SIGNIFICANT}g}") for value in window.tolist()],
        sma50=[_rounded(v) for v in _moving_average(close, 50, start).tolist()],
        sma200=[_rounded(v) for v in _moving_average(close, 200, start).tolist()],
        benchmark_rebased=[_rounded(v) for v in rebased.tolist()],
    )


def _closes(series: PriceSeries, as_of: date) -> tuple[np.ndarray, np.ndarray]:
    """The series' days and closes on or before ``as_of``."""
    known = series.sessions_until(as_of)
    return series.bars.index.to_numpy()[:known], series.bars["close"].to_numpy(dtype=float)[:known]


def _moving_average(close: np.ndarray, sessions: int, start: int) -> np.ndarray:
    """The simple moving average over ``sessions`` at each position from ``start`` on (NaN where the
    history is shorter): the quant engine's definition, over the whole history before each day. pandas'
    rolling sum, as the charts were always drawn: a mean is often half a unit in the sixth digit shown, so
    another summation would move points by one in that digit."""
    averages: np.ndarray = pd.Series(close).rolling(sessions).mean().to_numpy()[start:]
    return averages


def chart_svg(chart: PriceChart, *, width: int = 640, height: int = 260) -> str:
    """The chart as one SVG element (inline: it embeds nothing from outside)."""
    left, right, top, bottom = 58.0, 12.0, 14.0, 44.0
    plot_w, plot_h = width - left - right, height - top - bottom
    columns: dict[str, list[float | None]] = {
        "close": list(chart.close),
        "sma50": chart.sma50,
        "sma200": chart.sma200,
        "benchmark": chart.benchmark_rebased,
    }
    values = [v for series in columns.values() for v in series if v is not None]
    if len(chart.dates) < 2 or not values:
        return f'<p class="muted">Too few sessions to draw {escape(chart.symbol)}.</p>'
    low, high = min(values), max(values)
    if high == low:
        high = low + 1.0
    count = len(chart.dates)
    # Each session's x written once for the four lines (87 charts of 130 sessions: formatting was most of the
    # screen's dashboard).
    xs = [f"{left + plot_w * index / (count - 1):.1f}" for index in range(count)]

    def y(value: float) -> float:
        return top + plot_h * (1 - (value - low) / (high - low))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="price-chart" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(chart.symbol)} close, 50- and '
        f'200-day averages and {escape(chart.benchmark)} rebased, {chart.dates[0]} to {chart.dates[-1]}">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#262d36"/>',
    ]
    for field, _label, colour, dash in LINES:
        path = _path(columns[field], xs, y)
        if path:
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.6"{dashed}/>')
    text = 'font-family="Liberation Sans, DejaVu Sans, sans-serif" font-size="11" fill="#8591a0"'
    parts += [
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" {text}>{high:,.2f}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end" {text}>{low:,.2f}</text>',
        f'<text x="{left}" y="{top + plot_h + 15}" {text}>{chart.dates[0]}</text>',
        f'<text x="{left + plot_w}" y="{top + plot_h + 15}" text-anchor="end" {text}>'
        f"{chart.dates[-1]}</text>",
    ]
    legend_x = left
    for field, label, colour, dash in LINES:
        if not any(v is not None for v in columns[field]):
            continue
        shown = escape(label.replace("benchmark", chart.benchmark))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{legend_x}" y1="{height - 10}" x2="{legend_x + 16}" y2="{height - 10}" '
            f'stroke="{colour}" stroke-width="2"{dashed}/>'
            f'<text x="{legend_x + 20}" y="{height - 6}" {text}>{shown}</text>'
        )
        legend_x += 28 + 6.2 * len(shown)
    parts.append("</svg>")
    return "".join(parts)


def _path(series: list[float | None], xs: list[str], y: Callable[[float], float]) -> str:
    """An SVG path through the series' points (``xs``: each session's x, written), broken where a value is
    missing."""
    commands: list[str] = []
    pen = "M"
    for at, value in zip(xs, series, strict=False):  # a line as long as the dates, as price_chart makes it
        if value is None:
            pen = "M"
            continue
        commands.append(f"{pen}{at},{y(value):.1f}")
        pen = "L"
    return "".join(commands)
