"""A chart drawn by code as inline SVG, from the figures' exact values, for a PDF.

Any chart with a title, a kind (bar or line) and points that carry an exact value, what is printed for it
and its period can be drawn (a deck's ``Chart`` of ``Figure``s is one). Every point is labelled with its
``display`` (what the fact-check reads back) above the bar or dot
and its ``figure.period`` under the plot. Bars start at zero, so their lengths compare honestly; a line
spans the data's own range, because a line is read as change and its labelled points carry the values.
Solid colours and plain strokes only: no gradients, glows or shadows (the humanizer lint flags them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from html import escape
from typing import Protocol

from agents.render.fonts import CSS_FONT_FAMILY
from agents.text.cleaning import clean_render_text

INK = "#1F2933"
MUTED = "#6B7280"
RULE = "#C8CDD3"
POSITIVE = "#1F4E79"
NEGATIVE = "#A23B3B"

_LABEL_PX = 13.0
_MIN_LABEL_PX = 7.0
_CHAR_WIDTH_EM = 0.62  # DejaVu Sans averages a little over 0.6 em per character
_LINE_PADDING = Decimal("0.25")
_ONE_LINE_CHARS = 14  # a longer category is broken over two lines


class Point(Protocol):
    @property
    def decimal(self) -> Decimal: ...
    @property
    def display(self) -> str: ...
    @property
    def period(self) -> str: ...


class Chart(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "bar", "line" or "bridge"
    @property
    def points(self) -> Sequence[Point]: ...
    @property
    def steps(self) -> Sequence[bool]: ...  # a bridge's: which points are steps, not totals
    @property
    def adds(self) -> bool: ...  # a bridge whose steps are signed effects added to the total
    def category(self, index: int) -> str: ...  # what labels point ``index`` under the plot


@dataclass(frozen=True)
class Palette:
    """The colours a chart is drawn in (a deck's theme sets them)."""

    accent: str = POSITIVE
    negative: str = NEGATIVE
    ink: str = INK
    muted: str = MUTED


@dataclass(frozen=True)
class _Plot:
    """The drawing area inside the SVG, and the value range it maps onto its height."""

    left: float
    top: float
    width: float
    height: float
    low: Decimal
    high: Decimal

    def y(self, value: Decimal) -> float:
        share = float((value - self.low) / (self.high - self.low))
        return self.top + self.height * (1.0 - share)

    def slot_centre(self, index: int, count: int) -> float:
        return self.left + self.width * (index + 0.5) / count


def chart_svg(chart: Chart, width_px: int, height_px: int, palette: Palette = Palette()) -> str:
    """The chart as an ``<svg>`` element ``width_px`` by ``height_px``, every text escaped."""
    points = chart.points
    categories = [chart.category(i) for i in range(len(points))]
    # A bridge's categories, and a breakdown's longer names ("Wearables, Home and Accessories"), take two
    # lines; a period is one word.
    lines = [
        _two_lines(text) if chart.kind == "bridge" or len(text) > _ONE_LINE_CHARS else [text]
        for text in categories
    ]
    label_px = _label_size(points, [line for parts in lines for line in parts], width_px)
    # Room above for value labels, below for the categories, and for a value label under a negative bar.
    top = label_px * 2.0
    rows = len(max(lines, key=len, default=[""]))
    below = label_px * (1.2 * rows + 1.2)
    bottom = label_px * 4.0 if chart.kind == "bar" and any(p.decimal < 0 for p in points) else below
    low, high = value_range(chart)
    plot = _Plot(8.0, top, width_px - 16.0, max(height_px - top - bottom, 1.0), low, high)
    if not points:  # the spec allows it (the resolver never writes one): draw the axis alone
        body = []
    elif chart.kind == "bar":
        body = _bars(plot, points, label_px, palette)
    elif chart.kind == "bridge":
        body = _bridge(plot, chart, label_px, palette)
    else:
        body = _line(plot, points, label_px, palette)
    first_line = height_px - label_px * 0.8 - label_px * 1.2 * (rows - 1)
    periods = [
        _text(
            plot.slot_centre(i, len(points)), first_line + row * label_px * 1.2, part, label_px, palette.muted
        )
        for i, parts in enumerate(lines)
        for row, part in enumerate(parts)
    ]
    title = escape(clean_render_text(chart.title), quote=True)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_px}" height="{height_px}" '
        f'viewBox="0 0 {width_px} {height_px}" role="img" aria-label="{title}" '
        f'font-family="{escape(CSS_FONT_FAMILY, quote=True)}">'
        + "".join([*_zero_rule(plot), *body, *periods])
        + "</svg>"
    )


def _two_lines(text: str) -> list[str]:
    """A long category on two lines, broken at the space nearest its middle."""
    spaces = [i for i, char in enumerate(text) if char == " "]
    if not spaces:
        return [text]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return [text[:cut], text[cut + 1 :]]


def _label_size(points: Sequence[Point], categories: Sequence[str], width_px: int) -> float:
    """The largest label size (px) at which every value and category fits its slot, within bounds."""
    texts = [*(point.display for point in points), *categories]
    longest = max((len(text) for text in texts), default=1)
    slot = (width_px - 16.0) / max(len(points), 1)
    fitting = slot * 0.92 / (max(longest, 1) * _CHAR_WIDTH_EM)
    return max(_MIN_LABEL_PX, min(_LABEL_PX, fitting))


def value_range(chart: Chart) -> tuple[Decimal, Decimal]:
    """The values the plot spans, bottom to top: from zero for bars, the padded data range for a line
    (the PPTX chart's value axis is set to the same range, so both files draw the same shape)."""
    values = [point.decimal for point in chart.points] or [Decimal(0)]  # an empty chart: just the axis
    if chart.kind == "bridge":
        values = [*values, *(end for _, end in bridge_spans(chart))]
    low, high = min(values), max(values)
    if chart.kind in ("bar", "bridge"):
        low, high = min(low, Decimal(0)), max(high, Decimal(0))
    else:
        padding = (high - low) * _LINE_PADDING or abs(high) * _LINE_PADDING or Decimal(1)
        low, high = low - padding, high + padding
    if high == low:  # every bar is zero
        high = low + 1
    return low, high


def _zero_rule(plot: _Plot) -> list[str]:
    """The zero line where zero is in range (always for bars), else the plot's bottom edge."""
    y = plot.y(Decimal(0)) if plot.low <= 0 <= plot.high else plot.top + plot.height
    right = plot.left + plot.width
    return [f'<line x1="{plot.left:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}" stroke="{RULE}"/>']


def bridge_spans(chart: Chart) -> list[tuple[Decimal, Decimal]]:
    """Each bar of a bridge as (from, to): a total from zero to its value; a step from the running total
    by its value: taken away (revenue to net income: a cost), or added where the chart ``adds`` signed
    effects (last year's net income to this year's: revenue's change, each cost's effect)."""
    spans = []
    running = Decimal(0)
    sign = 1 if chart.adds else -1
    for point, step in zip(chart.points, chart.steps, strict=True):
        if step:
            spans.append((running, running + sign * point.decimal))
            running += sign * point.decimal
        else:
            spans.append((Decimal(0), point.decimal))
            running = point.decimal
    return spans


def takes_away(chart: Chart, index: int) -> bool:
    """Whether a bridge's bar ``index`` lowers the running total: drawn in the negative colour."""
    if not chart.steps[index]:
        return False
    return chart.points[index].decimal < 0 if chart.adds else chart.points[index].decimal > 0


def _bridge(plot: _Plot, chart: Chart, label_px: float, palette: Palette) -> list[str]:
    points = chart.points
    count = len(points)
    bar_width = min(plot.width / count * 0.6, 140.0)
    shapes = []
    for i, (point, (start, end)) in enumerate(zip(points, bridge_spans(chart), strict=True)):
        centre = plot.slot_centre(i, count)
        top, bottom = min(plot.y(start), plot.y(end)), max(plot.y(start), plot.y(end))
        colour = palette.negative if takes_away(chart, i) else palette.accent
        shapes.append(
            f'<rect x="{centre - bar_width / 2:.1f}" y="{top:.1f}" width="{bar_width:.1f}" '
            f'height="{max(bottom - top, 1.0):.1f}" fill="{colour}"/>'
        )
        shapes.append(_text(centre, top - label_px * 0.5, point.display, label_px, palette.ink, bold=True))
    return shapes


def _bars(plot: _Plot, points: Sequence[Point], label_px: float, palette: Palette) -> list[str]:
    count = len(points)
    bar_width = min(plot.width / count * 0.6, 140.0)
    zero = plot.y(Decimal(0))
    shapes = []
    for i, point in enumerate(points):
        end = plot.y(point.decimal)
        centre = plot.slot_centre(i, count)
        top, height = min(zero, end), max(abs(end - zero), 1.0)
        colour = palette.negative if point.decimal < 0 else palette.accent
        shapes.append(
            f'<rect x="{centre - bar_width / 2:.1f}" y="{top:.1f}" width="{bar_width:.1f}" '
            f'height="{height:.1f}" fill="{colour}"/>'
        )
        label_y = end + label_px * 1.2 if point.decimal < 0 else end - label_px * 0.5
        shapes.append(_text(centre, label_y, point.display, label_px, palette.ink, bold=True))
    return shapes


def _line(plot: _Plot, points: Sequence[Point], label_px: float, palette: Palette) -> list[str]:
    count = len(points)
    xy = [(plot.slot_centre(i, count), plot.y(point.decimal)) for i, point in enumerate(points)]
    shapes = []
    if count > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        shapes.append(f'<polyline points="{path}" fill="none" stroke="{palette.accent}" stroke-width="3"/>')
    for (x, y), point in zip(xy, points, strict=True):
        shapes.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{palette.accent}"/>')
        shapes.append(_text(x, y - label_px * 0.9, point.display, label_px, palette.ink, bold=True))
    return shapes


def _text(x: float, y: float, text: str, size_px: float, colour: str, *, bold: bool = False) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size_px:.1f}" fill="{colour}" '
        f'text-anchor="middle"{weight}>{escape(clean_render_text(text), quote=False)}</text>'
    )
