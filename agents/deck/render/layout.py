"""Where every part of a slide goes, and at what size, for both renderers: the PPTX drawing
(agents.deck.render.pptx) and the PDF (agents.deck.render.pdf) place the same boxes with the same font
sizes, so both files show the same slide. Text sizes are chosen by measuring the text with the faces that
draw it (DejaVu Sans, and its fallback for the glyphs it lacks: agents.render.metrics), so that it fits its
box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.deck.spec import Chart, Deck, Figure, Slide, Table, bullet_text
from agents.render.metrics import advance_em
from agents.text.cleaning import clean_render_text

EMU_PER_IN = 914400

SLIDE_WIDTH_IN = 12192000 / EMU_PER_IN  # 13.333 in, PowerPoint's own 16:9 width in EMU
SLIDE_HEIGHT_IN = 7.5
INSET_X_IN = 0.1  # PowerPoint's default text-box insets, repeated as padding in the HTML
INSET_Y_IN = 0.05
LINE_HEIGHT = 1.2  # PowerPoint's single spacing for DejaVu Sans is ~1.17 em; measure with a little more
TABLE_HEADER = ("Metric", "Period", "Value", "Source")
TABLE_BAND = "#E9EEF4"
TABLE_COLUMN_SHARES = (0.26, 0.14, 0.30, 0.30)  # the value column fits "99,999.99 USD/shares" unbroken
BULLET_SPACING_EM = 0.5  # between bullets

_MARGIN_IN = 0.6
_CONTENT_WIDTH_IN = SLIDE_WIDTH_IN - 2 * _MARGIN_IN
_GAP_IN = 0.3
_BULLETS_SHARE = 0.44  # of the body's width, beside a table or chart
_TABLE_ROW_IN = 0.42
# The most a title, a takeaway or the footer may take; each box is then cut to the height its
# text needs, plus slack for a renderer that wraps a word earlier than our measure.
_TITLE_IN = 1.0
_TAKEAWAY_IN = 0.8
_FOOTER_IN = 0.6
_SLACK_IN = 0.08
_CAPTION_PT = 13.0
# Font sizes tried, largest first; the first at which the text fits its box is used.
_TITLE_SIZES = (28.0, 26.0, 24.0, 22.0, 20.0, 18.0)
_TITLE_SLIDE_SIZES = (40.0, 36.0, 32.0, 28.0, 24.0)
_TITLE_FOOTER_SIZES = (14.0, 12.0, 11.0, 10.0)
_COMPANY_SIZES = (20.0, 18.0, 16.0, 14.0)
_TAKEAWAY_SIZES = (18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0)
_BULLET_SIZES = (18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0)
_TABLE_SIZES = (14.0, 13.0, 12.0, 11.0, 10.0, 9.0, 8.0)
_FOOTER_SIZES = (9.0, 8.0, 7.0)


@dataclass(frozen=True)
class Box:
    """A rectangle on the slide, in inches from its top-left corner."""

    left: float
    top: float
    width: float
    height: float

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def caption(self, size_pt: float) -> Box:
        return Box(self.left, self.top, self.width, _caption_height(size_pt))

    def below_caption(self, size_pt: float) -> Box:
        used = _caption_height(size_pt)
        return Box(self.left, self.top + used, self.width, max(self.height - used, 0.1))


@dataclass(frozen=True)
class SlideLayout:
    band: Box | None  # the title slide only: the company and its ticker
    title: Box
    takeaway: Box
    bullets: Box | None
    table: Box | None  # the table's caption and grid
    table_grid: Box | None
    chart: Box | None  # the chart's caption and plot
    footer: Box
    band_pt: float  # the company line's size
    title_pt: float
    takeaway_pt: float
    bullets_pt: float
    table_pt: float
    chart_label_pt: float
    footer_pt: float
    caption_pt: float = _CAPTION_PT


@dataclass(frozen=True)
class _Paragraph:
    """One paragraph to measure: its text, its size relative to the box's size, and its weight."""

    text: str
    extra_pt: float = 0.0
    bold: bool = False


def slide_layout(deck: Deck, slide: Slide) -> SlideLayout:
    """Where each part of ``slide`` goes and at what size, measured with DejaVu Sans so the text fits."""
    if slide.kind == "title":
        return _title_layout(deck, slide)
    top = _MARGIN_IN / 2
    band, band_pt = None, _COMPANY_SIZES[0]  # only the title slide has a band: its company line
    title, title_pt = _fitted(_row(top, _TITLE_IN), [_Paragraph(slide.title, bold=True)], _TITLE_SIZES)
    takeaway, takeaway_pt = _fitted(
        _row(title.bottom, _TAKEAWAY_IN), [_Paragraph(slide.takeaway)], _TAKEAWAY_SIZES
    )
    lowest = _row(SLIDE_HEIGHT_IN - _FOOTER_IN - 0.1, _FOOTER_IN)
    footer, footer_pt = _fitted(
        lowest, [_Paragraph(line) for line in footer_lines(deck, slide)], _FOOTER_SIZES
    )
    footer = _row(lowest.bottom - footer.height, footer.height)  # sits on the bottom margin
    body = _row(takeaway.bottom + 0.15, footer.top - 0.1 - (takeaway.bottom + 0.15))
    bullets, table, chart = _split_body(body, slide)
    table_grid, table_pt = _table_grid(table, slide.table)
    bullet_paragraphs = [_Paragraph(bullet_text(bullet)) for bullet in slide.bullets]
    return SlideLayout(
        band=band,
        title=title,
        takeaway=takeaway,
        bullets=bullets,
        table=table,
        table_grid=table_grid,
        chart=chart,
        footer=footer,
        band_pt=band_pt,
        title_pt=title_pt,
        takeaway_pt=takeaway_pt,
        bullets_pt=_fitting_size(bullets, bullet_paragraphs, _BULLET_SIZES, bullets=True) if bullets else 0.0,
        table_pt=table_pt,
        chart_label_pt=_chart_label_size(chart, slide.chart),
        footer_pt=footer_pt,
    )


def _title_layout(deck: Deck, slide: Slide) -> SlideLayout:
    """The title slide: the company on a line of its own (the band), the deck's title large, its thesis,
    and at the foot the audience, the data's date and the firm."""
    band, band_pt = _fitted(_row(1.6, 0.6), [_Paragraph(company_line(deck), bold=True)], _COMPANY_SIZES)
    title, title_pt = _fitted(
        _row(band.bottom + 0.15, 1.9), [_Paragraph(slide.title, bold=True)], _TITLE_SLIDE_SIZES
    )
    takeaway, takeaway_pt = _fitted(
        _row(title.bottom + 0.2, 1.3), [_Paragraph(slide.takeaway)], _TAKEAWAY_SIZES
    )
    lowest = _row(SLIDE_HEIGHT_IN - _FOOTER_IN - 0.3, _FOOTER_IN + 0.2)
    lines = [_Paragraph(line) for line in footer_lines(deck, slide)]
    footer, footer_pt = _fitted(lowest, lines, _TITLE_FOOTER_SIZES)
    footer = _row(lowest.bottom - footer.height, footer.height)
    return SlideLayout(
        band=band,
        title=title,
        takeaway=takeaway,
        bullets=None,
        table=None,
        table_grid=None,
        chart=None,
        footer=footer,
        band_pt=band_pt,
        title_pt=title_pt,
        takeaway_pt=takeaway_pt,
        bullets_pt=0.0,
        table_pt=_TABLE_SIZES[0],
        chart_label_pt=10.0,
        footer_pt=footer_pt,
    )


def company_line(deck: Deck) -> str:
    return f"{deck.company} ({deck.ticker})"


def table_row(figure: Figure) -> tuple[str, str, str, str]:
    """A table row as both renderers print it, under ``TABLE_HEADER``."""
    return (figure.label, figure.period, figure.display, figure.source)


def footer_lines(deck: Deck, slide: Slide) -> list[str]:
    """The sources of the slide's figures, then the slide's number on a line of its own (the fact-check
    skips a line that only numbers the slide, and would read "20" in "Slide 3 of 20 · ..." as a figure).
    The title slide's foot is the audience, the data's date and the firm."""
    if slide.kind == "title":
        return [deck.subtitle, f"Prepared by {deck.theme.firm}"]
    sources = list(dict.fromkeys(figure.source for figure in slide.figures() if figure.source))
    position = f"Slide {slide.number} of {len(deck.slides)}"
    return [f"Sources: {'; '.join(sources)}", position] if sources else [position]


def _row(top: float, height: float) -> Box:
    """A box across the slide's content width."""
    return Box(_MARGIN_IN, top, _CONTENT_WIDTH_IN, height)


def _split_body(body: Box, slide: Slide) -> tuple[Box | None, Box | None, Box | None]:
    """Bullets on the left when a table or chart shares the slide; a table above a chart when both do."""
    if slide.table is None and slide.chart is None:
        return (body if slide.bullets else None), None, None
    area = body
    bullets = None
    if slide.bullets:
        text_width = body.width * _BULLETS_SHARE
        bullets = Box(body.left, body.top, text_width, body.height)
        area = Box(body.left + text_width + _GAP_IN, body.top, body.width - text_width - _GAP_IN, body.height)
    if slide.table is None or slide.chart is None:
        return bullets, (area if slide.table else None), (area if slide.chart else None)
    wanted = _caption_height(_CAPTION_PT) + (len(slide.table.rows) + 1) * _TABLE_ROW_IN
    table = Box(area.left, area.top, area.width, min(wanted, area.height * 0.5))
    chart_top = table.bottom + 0.15
    return bullets, table, Box(area.left, chart_top, area.width, area.bottom - chart_top)


def _table_grid(box: Box | None, table: Table | None) -> tuple[Box | None, float]:
    """The grid under the caption, and the largest font at which every row fits it."""
    if box is None or table is None:
        return None, _TABLE_SIZES[0]
    area = box.below_caption(_CAPTION_PT)
    rows = [TABLE_HEADER, *(table_row(figure) for figure in table.rows)]
    for size in _TABLE_SIZES:
        row_height = max(_row_height(row, area.width, size) for row in rows)
        whole = all(_one_line(row, area.width, size) for row in rows)
        if (whole and row_height * len(rows) <= area.height) or size == _TABLE_SIZES[-1]:
            height = min(max(row_height, _TABLE_ROW_IN) * len(rows), area.height)
            return Box(area.left, area.top, area.width, height), size
    raise AssertionError("unreachable: the smallest size always returns")


def _row_height(row: Sequence[str], width_in: float, size_pt: float) -> float:
    lines = max(
        _line_count(text, _cell_width_pt(width_in, i), size_pt, bold=False) for i, text in enumerate(row)
    )
    return lines * size_pt * LINE_HEIGHT / 72 + INSET_Y_IN


def _one_line(row: Sequence[str], width_in: float, size_pt: float) -> bool:
    """Whether the period and the value fit their cells on one line: a figure is never broken (the PDF
    keeps both on one line, and the fact-check reads a figure back whole)."""
    return all(_line_count(row[i], _cell_width_pt(width_in, i), size_pt, bold=False) == 1 for i in (1, 2))


def _cell_width_pt(width_in: float, column: int) -> float:
    return (width_in * TABLE_COLUMN_SHARES[column] - 2 * INSET_X_IN) * 72


def _chart_label_size(box: Box | None, chart: Chart | None) -> float:
    """The largest label size (10 to 6 pt) at which every point's value fits the width of its slot."""
    if box is None or chart is None or not chart.points:
        return 10.0
    slot_pt = box.width * 72 * 0.85 / len(chart.points)
    # A bridge's label sits inside its bar (a stacked column takes no label outside), about 70% of its slot.
    share = 0.7 if chart.kind == "bridge" else 0.9
    widest = max(_text_width(point.display, 1.0, bold=True) for point in chart.points)
    return max(6.0, min(10.0, float(int(slot_pt * share / widest))))


def _fitted(most: Box, paragraphs: list[_Paragraph], sizes: Sequence[float]) -> tuple[Box, float]:
    """The box cut to the height the text needs at the largest size at which it fits ``most``."""
    size = _fitting_size(most, paragraphs, sizes)
    needed = _text_height(most, paragraphs, size, bullets=False) + _SLACK_IN
    return Box(most.left, most.top, most.width, min(needed, most.height)), size


def _fitting_size(
    box: Box, paragraphs: list[_Paragraph], sizes: Sequence[float], *, bullets: bool = False
) -> float:
    for size in sizes:
        if _text_height(box, paragraphs, size, bullets=bullets) <= box.height:
            return size
    return sizes[-1]


def _text_height(box: Box, paragraphs: list[_Paragraph], size_pt: float, *, bullets: bool) -> float:
    """Inches the paragraphs take in the box at ``size_pt``, insets included."""
    width_pt = (box.width - 2 * INSET_X_IN) * 72 - (size_pt * 1.1 if bullets else 0.0)
    total_pt = 0.0
    for index, paragraph in enumerate(paragraphs):
        size = size_pt + paragraph.extra_pt
        total_pt += _line_count(paragraph.text, width_pt, size, bold=paragraph.bold) * size * LINE_HEIGHT
        if bullets and index > 0:
            total_pt += size * BULLET_SPACING_EM
    return total_pt / 72 + 2 * INSET_Y_IN


def _line_count(text: str, width_pt: float, size_pt: float, *, bold: bool) -> int:
    """Lines the text wraps to at this width, breaking at spaces as PowerPoint and browsers do."""
    lines, used = 1, 0.0
    space = _text_width(" ", size_pt, bold=bold)
    for word in clean_render_text(text).split():
        width = _text_width(word, size_pt, bold=bold)
        if used and used + space + width > width_pt:
            lines, used = lines + 1, 0.0
        if width > width_pt:  # a word longer than the line is broken inside
            lines += int(width // width_pt)
            width %= width_pt
        used = used + space + width if used else width
    return lines


def _caption_height(size_pt: float) -> float:
    return size_pt * LINE_HEIGHT / 72 + 2 * INSET_Y_IN + 0.05


def _text_width(text: str, size_pt: float, *, bold: bool) -> float:
    return advance_em(text, bold=bold) * size_pt
