"""A resolved ``Deck`` as a 16:9 PowerPoint file: one text box per part, a native table and a native chart.

The blank layout is used and every box is placed by ``slide_layout`` (agents.deck.render.layout; the PDF
uses the same boxes and font sizes), because the default template's placeholders sit at 4:3 positions once the
slide is widened. Text sizes are chosen by measuring the text with DejaVu Sans, the face that draws it, so
that it fits its box. Shapes are named for what they are ("Title", "Bullets", "Chart" ...): the render lint's
findings name them.
Every text is cleaned first: python-pptx raises on lone surrogates and U+FFFE and writes control
characters as ``_x0000_``. The deck itself is embedded as deck.json (agents.deck.render.embedded).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from typing import Any

from lxml import etree
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.chart.xlsx import CategoryWorkbookWriter
from pptx.dml.color import RGBColor
from pptx.enum.chart import XL_CHART_TYPE, XL_LABEL_POSITION, XL_MARKER_STYLE, XL_TICK_LABEL_POSITION
from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches, Pt

from agents.deck.render.embedded import embed_in_pptx
from agents.deck.render.layout import (
    BULLET_SPACING_EM,
    EMU_PER_IN,
    INSET_X_IN,
    INSET_Y_IN,
    SLIDE_HEIGHT_IN,
    SLIDE_WIDTH_IN,
    TABLE_BAND,
    TABLE_COLUMN_SHARES,
    TABLE_HEADER,
    Box,
    SlideLayout,
    company_line,
    footer_lines,
    slide_layout,
    table_row,
)
from agents.deck.spec import Chart, Deck, Slide, Table, Theme, bullet_text
from agents.kept import KeptInProcess
from agents.render import charts
from agents.render.fonts import FALLBACK_FONT_NAME, FONT_NAME
from agents.text.cleaning import clean_render_text

# Shape names, in reading order (a slide has the ones it needs).
COMPANY_SHAPE = "Company"  # the title slide only: the company and its ticker
TITLE_SHAPE = "Title"
TAKEAWAY_SHAPE = "Takeaway"
BULLETS_SHAPE = "Bullets"
TABLE_TITLE_SHAPE = "Table title"
TABLE_SHAPE = "Table"
CHART_TITLE_SHAPE = "Chart title"
CHART_SHAPE = "Chart"
FOOTER_SHAPE = "Footer"

BRIDGE_GAP_WIDTH = 30  # a bridge's bars take most of their slot, so each holds its label
_THIN_BAR = 0.1  # of the value axis's range: a bar thinner than this cannot hold its label inside
_BLANK_LAYOUT = 6  # "Blank" in python-pptx's default template: no placeholders at all
# Fixed dates and zip timestamps: the same deck renders to the same bytes.
_FIXED_DATE = datetime(2000, 1, 1)  # noqa: DTZ001  # core properties are written without a zone
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


# The last few decks' bytes, by the decks' content: the same deck renders to the same bytes, and the deck a
# run freezes is the candidate it measured moments before (0.3-0.6 s each on 2 cores).
_made: KeptInProcess[bytes] = KeptInProcess(4)


def render_pptx(deck: Deck, *, spec: Deck | None = None) -> bytes:
    """The deck as PPTX bytes; ``spec`` (default ``deck``) is the deck embedded as deck.json."""
    embedded = spec if spec is not None else deck
    # repr, not JSON: a deck of hostile text may hold lone surrogates, which JSON cannot encode (the render
    # cleans them; the key must not fail on them first).
    dumped = repr((deck.model_dump(), embedded.model_dump()))  # every field, whatever its repr setting
    key = hashlib.sha256(dumped.encode("utf-8", "backslashreplace")).hexdigest()
    return _made.get(key, lambda: _render(deck, embedded))


def _render(deck: Deck, embedded: Deck) -> bytes:
    presentation: Any = Presentation(io.BytesIO(widened_template()))
    for slide in deck.slides:
        page = presentation.slides.add_slide(presentation.slide_layouts[_BLANK_LAYOUT])
        _draw_slide(page.shapes, deck, slide)
        page.notes_slide.notes_text_frame.text = clean_render_text(speaker_notes(slide))
    _set_properties(presentation.core_properties, deck)
    embed_in_pptx(presentation, embedded)
    buffer = io.BytesIO()
    presentation.save(buffer)
    return _with_fixed_timestamps(buffer.getvalue())


@cache
def widened_template() -> bytes:
    """The default template made 16:9, once a process (a worker makes it before it forks: the deck's
    ``Workflow.warm_process``): stretching its master and its layouts took 70 ms of every render (measured
    beside the suite), loading the stretched one from its bytes 4 ms."""
    presentation: Any = Presentation()
    _widen_template(presentation)
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def _widen_template(presentation: Any) -> None:
    """Make the default 4:3 template 16:9, its master's and layouts' placeholders stretched to match, so a
    slide someone adds in PowerPoint later does not put its title at 4:3 positions."""
    old_width = presentation.slide_width
    presentation.slide_width = Emu(round(SLIDE_WIDTH_IN * EMU_PER_IN))
    presentation.slide_height = Emu(round(SLIDE_HEIGHT_IN * EMU_PER_IN))
    ratio = presentation.slide_width / old_width
    master = presentation.slide_master
    # Layouts first: a layout placeholder without a position of its own reads the master's, still 4:3,
    # and gets the stretched one written on it; the master is stretched last.
    for shape in [*(shape for layout in master.slide_layouts for shape in layout.shapes), *master.shapes]:
        if shape.left is not None and shape.width is not None:
            shape.left, shape.width = Emu(round(shape.left * ratio)), Emu(round(shape.width * ratio))


def _draw_slide(shapes: Any, deck: Deck, slide: Slide) -> None:
    layout = slide_layout(deck, slide)
    theme = deck.theme
    if layout.band is not None:  # the title slide's company line
        band = _text_box(shapes, COMPANY_SHAPE, layout.band)
        _paragraph(band, company_line(deck), layout.band_pt, bold=True, colour=theme.accent, first=True)
    _paragraph(
        _text_box(shapes, TITLE_SHAPE, layout.title),
        slide.title,
        layout.title_pt,
        bold=True,
        colour=theme.ink,
        first=True,
    )
    takeaway = _text_box(shapes, TAKEAWAY_SHAPE, layout.takeaway)
    _paragraph(takeaway, slide.takeaway, layout.takeaway_pt, colour=theme.accent, first=True)
    if layout.bullets is not None:
        bullets = _text_box(shapes, BULLETS_SHAPE, layout.bullets)
        for index, bullet in enumerate(slide.bullets):
            paragraph = _paragraph(
                bullets, bullet_text(bullet), layout.bullets_pt, colour=theme.ink, first=index == 0
            )
            _make_bullet(paragraph, layout.bullets_pt, space_before=index > 0)
    if slide.table is not None and layout.table is not None:
        _draw_table(shapes, slide.table, layout, theme)
    if slide.chart is not None and layout.chart is not None:
        _draw_chart(shapes, slide.chart, layout.chart, layout, theme)
    footer = _text_box(shapes, FOOTER_SHAPE, layout.footer)
    for index, line in enumerate(footer_lines(deck, slide)):
        _paragraph(footer, line, layout.footer_pt, colour=theme.muted, first=index == 0)


def speaker_notes(slide: Slide) -> str:
    """What the presenter reads under the slide: its takeaway, then each figure with its period, fact id and
    source, so a question in the room ("where is that from?") is answered from the notes."""
    lines = [slide.takeaway] if slide.takeaway else []
    lines += [
        f"{figure.label} {figure.period}: {figure.display} ({figure.fact_id}; {figure.source})"
        for figure in dict.fromkeys(slide.figures())
    ]
    return "\n".join(lines)


def _text_box(shapes: Any, name: str, box: Box) -> Any:
    shape = shapes.add_textbox(*_emu(box))
    shape.name = name
    frame = shape.text_frame
    frame.word_wrap = True
    frame.auto_size = MSO_AUTO_SIZE.NONE
    frame.vertical_anchor = MSO_ANCHOR.TOP
    frame.margin_left = frame.margin_right = Inches(INSET_X_IN)
    frame.margin_top = frame.margin_bottom = Inches(INSET_Y_IN)
    return frame


def _paragraph(
    frame: Any,
    text: str,
    size_pt: float,
    *,
    bold: bool = False,
    colour: str,
    first: bool = False,
) -> Any:
    paragraph = frame.paragraphs[0] if first else frame.add_paragraph()
    _run(paragraph, text, size_pt, bold=bold, colour=colour)
    return paragraph


def _run(paragraph: Any, text: str, size_pt: float, *, colour: str, bold: bool = False) -> None:
    run = paragraph.add_run()
    run.text = clean_render_text(text)
    font = run.font
    font.name = FONT_NAME
    font.size = Pt(size_pt)
    font.bold = bold
    font.color.rgb = _rgb(colour)
    # python-pptx sets the latin face only; the others are named too, so no theme font is used: East Asian
    # text in the face the PDF falls back to for it (agents.render.fonts), complex scripts in DejaVu Sans.
    properties = run._r.get_or_add_rPr()
    for tag, face in (("a:ea", FALLBACK_FONT_NAME), ("a:cs", FONT_NAME)):
        etree.SubElement(properties, qn(tag)).set("typeface", face)


def _make_bullet(paragraph: Any, size_pt: float, *, space_before: bool) -> None:
    """A real bullet (hanging indent, a bullet character), not a typed "•" in the text; the children are
    appended in the order the schema wants them (spacing, bullet font, bullet character)."""
    properties = paragraph._p.get_or_add_pPr()
    indent = round(Pt(size_pt * 1.1))
    properties.set("marL", str(indent))
    properties.set("indent", str(-indent))
    if space_before:  # half a line between bullets, in 1/100 pt, as the HTML's margin
        spacing = etree.SubElement(properties, qn("a:spcBef"))
        etree.SubElement(spacing, qn("a:spcPts")).set("val", str(round(size_pt * BULLET_SPACING_EM * 100)))
    etree.SubElement(properties, qn("a:buFont")).set("typeface", FONT_NAME)
    etree.SubElement(properties, qn("a:buChar")).set("char", "•")


def _draw_table(shapes: Any, table: Table, layout: SlideLayout, theme: Theme) -> None:
    assert layout.table is not None and layout.table_grid is not None
    caption = _text_box(shapes, TABLE_TITLE_SHAPE, layout.table.caption(layout.caption_pt))
    _paragraph(caption, table.title, layout.caption_pt, bold=True, colour=theme.ink, first=True)
    grid = layout.table_grid
    shape = shapes.add_table(len(table.rows) + 1, len(TABLE_HEADER), *_emu(grid))
    shape.name = TABLE_SHAPE
    native = shape.table
    _, _, width, height = _emu(grid)
    edges = [round(width * sum(TABLE_COLUMN_SHARES[:i])) for i in range(len(TABLE_HEADER) + 1)]
    for column, start, end in zip(native.columns, edges, edges[1:], strict=False):
        column.width = Emu(end - start)
    count = len(table.rows) + 1
    for index, row in enumerate(native.rows):
        row.height = Emu(round(height * (index + 1) / count) - round(height * index / count))
    rows: list[Sequence[str]] = [TABLE_HEADER, *(table_row(figure) for figure in table.rows)]
    for row_index, values in enumerate(rows):
        for column_index, value in enumerate(values):
            cell = native.cell(row_index, column_index)
            cell.margin_left = cell.margin_right = Inches(INSET_X_IN)
            cell.margin_top = cell.margin_bottom = Inches(INSET_Y_IN / 2)
            cell.vertical_anchor = MSO_ANCHOR.MIDDLE
            frame = cell.text_frame
            frame.word_wrap = True
            cell.fill.solid()
            cell.fill.fore_color.rgb = _rgb(_row_fill(row_index, theme))
            colour = "#FFFFFF" if row_index == 0 else theme.ink
            _run(frame.paragraphs[0], value, layout.table_pt, bold=row_index == 0, colour=colour)


def _row_fill(row_index: int, theme: Theme) -> str:
    """The header in the theme's accent, then banded rows (the HTML table uses the same colours)."""
    if row_index == 0:
        return theme.accent
    return TABLE_BAND if row_index % 2 == 1 else "#FFFFFF"


class _FixedDateWorkbookWriter(CategoryWorkbookWriter):
    """python-pptx embeds each chart's data as an Excel workbook, which XlsxWriter stamps with the time it
    was written (docProps/core.xml): the same deck rendered a second later gave other bytes. Stamped with
    the package's fixed date instead."""

    @contextmanager
    def _open_worksheet(self, xlsx_file: Any) -> Iterator[tuple[Any, Any]]:
        with super()._open_worksheet(xlsx_file) as (workbook, worksheet):
            workbook.set_properties({"created": _FIXED_DATE.replace(tzinfo=UTC)})
            yield workbook, worksheet


class _ChartData(CategoryChartData):
    @property
    def _workbook_writer(self) -> CategoryWorkbookWriter:
        return _FixedDateWorkbookWriter(self)  # type: ignore[no-untyped-call]  # python-pptx is untyped


def _draw_chart(shapes: Any, chart: Chart, box: Box, layout: SlideLayout, theme: Theme) -> None:
    caption = _text_box(shapes, CHART_TITLE_SHAPE, box.caption(layout.caption_pt))
    _paragraph(caption, chart.title, layout.caption_pt, bold=True, colour=theme.ink, first=True)
    if not chart.points:  # python-pptx cannot write a chart without categories; the resolver never asks
        return
    # python-pptx's chart data classes carry no annotations.
    data = _ChartData(number_format="General")  # type: ignore[no-untyped-call]
    data.categories = [clean_render_text(chart.category(i)) for i in range(len(chart.points))]
    area = box.below_caption(layout.caption_pt)
    if chart.kind == "bridge":
        _draw_bridge(shapes, chart, area, data, label_pt=layout.chart_label_pt, theme=theme)
        return
    values = [float(point.decimal) for point in chart.points]
    data.add_series(clean_render_text(chart.title), values)  # type: ignore[no-untyped-call]
    kind = XL_CHART_TYPE.COLUMN_CLUSTERED if chart.kind == "bar" else XL_CHART_TYPE.LINE_MARKERS
    frame = shapes.add_chart(kind, *_emu(area), data)
    frame.name = CHART_SHAPE
    _style_axes(frame.chart, chart, layout.chart_label_pt, theme)
    _style_points(frame.chart.plots[0], chart, layout.chart_label_pt, theme)


def _draw_bridge(shapes: Any, chart: Chart, area: Box, data: Any, *, label_pt: float, theme: Theme) -> None:
    """A waterfall as PowerPoint draws one without its own chart type: stacked columns whose first series
    (the offset to each bar's foot) is not drawn; the bars are the visible part above or below zero,
    labelled with the figures' display strings, as the PDF's bridge (agents.render.charts)."""
    parts: list[tuple[float, float, float]] = []  # (offset, above zero, below zero) of each bar
    for start, end in charts.bridge_spans(chart):
        low, high = sorted((float(start), float(end)))
        if low >= 0:
            parts.append((low, high - low, 0.0))
        elif high <= 0:
            parts.append((high, 0.0, low - high))
        else:
            parts.append((0.0, high, low))
    base, up, down = (list(column) for column in zip(*parts, strict=True))
    for name, values in (("Offset", base), ("Bar", up), ("Below zero", down)):
        data.add_series(name, values)
    frame = shapes.add_chart(XL_CHART_TYPE.COLUMN_STACKED, *_emu(area), data)
    frame.name = CHART_SHAPE
    _style_axes(frame.chart, chart, label_pt, theme)
    plot = frame.chart.plots[0]
    plot.gap_width = BRIDGE_GAP_WIDTH
    plot.overlap = 100
    offset, bars, under = plot.series
    offset.format.fill.background()
    offset.format.line.fill.background()
    axis_low, axis_high = charts.value_range(chart)
    span = float(axis_high - axis_low)
    for index, figure in enumerate(chart.points):
        colour = _rgb(theme.negative if charts.takes_away(chart, index) else theme.accent)
        for series in (bars, under):
            point = series.points[index]
            point.format.fill.solid()
            point.format.fill.fore_color.rgb = colour
        visible = abs(up[index]) + abs(down[index])
        label = _label_point
        if visible < span * _THIN_BAR and base[index] > 0:
            # Too thin to hold its label: it is written just under the bar, over the undrawn offset, in ink.
            label(offset.points[index].data_label, figure.display, label_pt, bar=None, colour=theme.ink)
            offset.points[index].data_label.position = XL_LABEL_POSITION.INSIDE_END
        else:
            labelled = bars if up[index] > 0 or down[index] == 0 else under
            label(labelled.points[index].data_label, figure.display, label_pt, bar=None, colour="#FFFFFF")


def _style_axes(native: Any, chart: Chart, label_pt: float, theme: Theme) -> None:
    native.has_legend = False
    native.has_title = False
    native.font.name = FONT_NAME
    native.font.size = Pt(label_pt)
    # Every point carries its value label, so the value axis would only repeat them in raw floats.
    native.value_axis.visible = False
    low, high = charts.value_range(chart)
    if chart.kind == "line":
        native.value_axis.minimum_scale, native.value_axis.maximum_scale = float(low), float(high)
    elif low == 0:  # bars start at zero, as in the PDF; the far end is left to leave room for labels
        native.value_axis.minimum_scale = 0
    elif high == 0:
        native.value_axis.maximum_scale = 0
    native.value_axis.has_major_gridlines = False
    native.category_axis.tick_label_position = XL_TICK_LABEL_POSITION.LOW
    native.category_axis.format.line.color.rgb = _rgb(charts.RULE)
    native.category_axis.tick_labels.font.color.rgb = _rgb(theme.muted)


def _style_points(plot: Any, chart: Chart, label_pt: float, theme: Theme) -> None:
    """Solid colours (red for a negative figure) and each point labelled with its display string."""
    series = plot.series[0]
    if chart.kind == "bar":
        plot.gap_width = 70
        series.invert_if_negative = False
    else:
        series.smooth = False
        series.format.line.color.rgb = _rgb(theme.accent)
        series.marker.style = XL_MARKER_STYLE.CIRCLE
        series.marker.size = 8
    for point, figure in zip(series.points, chart.points, strict=True):
        colour = _rgb(theme.negative if figure.decimal < 0 else theme.accent)
        if chart.kind == "bar":
            point.format.fill.solid()
            point.format.fill.fore_color.rgb = colour
        else:
            point.marker.format.fill.solid()
            point.marker.format.fill.fore_color.rgb = colour
            point.marker.format.line.color.rgb = colour
        _label_point(point.data_label, figure.display, label_pt, bar=chart.kind == "bar", colour=theme.ink)


def _label_point(label: Any, display: str, size_pt: float, *, bar: bool | None, colour: str) -> None:
    """The point's label reads exactly the spec's display string, not a number the chart formats."""
    label.has_text_frame = True
    # A stacked column (a bridge: ``bar`` None) takes only labels inside its bars: centred, in white.
    if bar is not None:
        label.position = XL_LABEL_POSITION.OUTSIDE_END if bar else XL_LABEL_POSITION.ABOVE
    frame = label.text_frame
    frame._txBody.bodyPr.set("wrap", "none")  # one line, as the PDF prints it
    _run(frame.paragraphs[0], display, size_pt, bold=True, colour=colour)


def _emu(box: Box) -> tuple[Emu, Emu, Emu, Emu]:
    """Left, top, width and height in EMU, rounded edge by edge so that boxes that touch never overlap."""
    left, top = round(box.left * EMU_PER_IN), round(box.top * EMU_PER_IN)
    right, bottom = round((box.left + box.width) * EMU_PER_IN), round(box.bottom * EMU_PER_IN)
    return Emu(left), Emu(top), Emu(right - left), Emu(bottom - top)


def _rgb(colour: str) -> RGBColor:
    red, green, blue = bytes.fromhex(colour.lstrip("#"))
    return RGBColor(red, green, blue)  # type: ignore[no-untyped-call]  # python-pptx: no annotations


def _set_properties(properties: Any, deck: Deck) -> None:
    properties.title = clean_render_text(deck.title)
    properties.subject = clean_render_text(f"{deck.company} ({deck.ticker})")
    properties.author = properties.last_modified_by = "Analyst Desk"
    properties.created = properties.modified = properties.last_printed = _FIXED_DATE
    properties.revision = 1


def _with_fixed_timestamps(package: bytes) -> bytes:
    """The same zip with every member's timestamp fixed (python-pptx stamps the time of saving)."""
    source = zipfile.ZipFile(io.BytesIO(package))
    buffer = io.BytesIO()
    with source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=_ZIP_DATE)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info))
    return buffer.getvalue()
