"""A resolved ``Deck`` as HTML, one 16:9 page per slide, and that HTML as a PDF (WeasyPrint).

Every box sits where ``slide_layout`` puts it (the PPTX renderer uses the same boxes and font sizes), so
the two files show the same text in the same places and the same reading order: on slide 1 the deck's
title, subtitle and thesis, then the slide title, takeaway, bullets, table, chart and a footer with the
slide number and the sources. A page clips what overflows its box rather than spilling onto another
page, so PDF page N is always slide N (the render lint reports the overflow).

All text is escaped and cleaned; the deck embedded as deck.json rides along as a ``data:`` attachment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.render.pdf import RenderedPdf

from agents.deck.render.embedded import DECK_JSON_NAME, deck_attachment_href
from agents.deck.render.layout import (
    BULLET_SPACING_EM,
    INSET_X_IN,
    INSET_Y_IN,
    LINE_HEIGHT,
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
from agents.deck.spec import Bullet, Chart, Deck, Slide, Table, Theme, bullet_text
from agents.render import charts
from agents.render.fonts import CSS_FONT_FAMILY
from agents.text.cleaning import clean_render_text

_CSS_PX_PER_IN = 96


def _css(theme: Theme) -> str:
    """The slides' style sheet in the deck's theme."""
    return f"""
@page {{ size: {SLIDE_WIDTH_IN:.3f}in {SLIDE_HEIGHT_IN}in; margin: 0; }}
* {{ box-sizing: border-box; margin: 0; padding: 0; }}
body {{ font-family: {CSS_FONT_FAMILY}; color: {theme.ink}; line-height: {LINE_HEIGHT}; }}
.slide {{ position: relative; width: {SLIDE_WIDTH_IN:.3f}in; height: {SLIDE_HEIGHT_IN}in; overflow: hidden;
  break-after: page; background: #FFFFFF; }}
.slide:last-child {{ break-after: auto; }}
.box {{ position: absolute; overflow: hidden; padding: {INSET_Y_IN}in {INSET_X_IN}in; }}
.company {{ color: {theme.accent}; font-weight: bold; }}
.subtitle, .footer {{ color: {theme.muted}; }}
.thesis, .takeaway {{ color: {theme.accent}; }}
.title, .deck-title, .caption {{ font-weight: bold; }}
.bullets ul {{ list-style: none; padding-left: 1.1em; }}
.bullets li {{ position: relative; margin-top: {BULLET_SPACING_EM}em; }}
.bullets li:first-child {{ margin-top: 0; }}
.bullets li::before {{ content: "•"; float: left; width: 1.1em; margin-left: -1.1em; }}
table {{ width: 100%; border-collapse: collapse; table-layout: fixed; }}
th, td {{ padding: {INSET_Y_IN / 2}in {INSET_X_IN}in; text-align: left; vertical-align: middle;
  overflow-wrap: anywhere; }}
th {{ background: {theme.accent}; color: #FFFFFF; }}
tr.band td {{ background: {TABLE_BAND}; }}
/* A period or a figure is never broken across lines: the fact-check reads it back whole from the PDF. */
td:nth-child(2), td:nth-child(3) {{ white-space: nowrap; overflow-wrap: normal; }}
.figure {{ white-space: nowrap; }}
.chart-area {{ position: absolute; }}
"""


def slide_pages(deck: Deck) -> tuple[str, ...]:
    """Each slide's page as HTML, in order: what ``deck_html`` joins and ``page_keys`` hashes, made once
    where a caller needs both (a candidate's measure)."""
    return tuple(_slide_html(deck, slide) for slide in deck.slides)


def deck_html(deck: Deck, *, spec: Deck | None = None, pages: Sequence[str] | None = None) -> str:
    """The deck as one HTML document; ``spec`` (default ``deck``) is the deck attached as deck.json;
    ``pages``: these of its pages (``slide_pages``), each drawn as in the whole deck (a page depends on its
    own slide alone: ``page_keys``); by default every slide's."""
    attached = spec if spec is not None else deck
    body = "".join(slide_pages(deck) if pages is None else pages)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_text(deck.title)}</title><style>{_css(deck.theme)}</style>"
        f'<link rel="attachment" title="{DECK_JSON_NAME}" href="{deck_attachment_href(attached)}">'
        f"</head><body>{body}</body></html>"
    )


def page_keys(deck: Deck, pages: Sequence[str] | None = None) -> tuple[str, ...]:
    """Each page's key: the sha256 of its slide's HTML (``pages``, default ``slide_pages(deck)``) with the
    stylesheet it is drawn with. Slides are pages of fixed size placed absolutely, so a page's text depends
    on its own slide's HTML alone: a page of the same key reads back the same text from any deck's PDF
    (agents.deck.factcheck.extract)."""
    css = _css(deck.theme)
    return tuple(
        hashlib.sha256(f"{css}\n{page}".encode(errors="surrogatepass")).hexdigest()
        for page in (slide_pages(deck) if pages is None else pages)
    )


def render_pdf(deck: Deck, *, spec: Deck | None = None) -> RenderedPdf:
    return pdf_of_html(deck_html(deck, spec=spec))


def pdf_of_html(html: str) -> RenderedPdf:
    """A deck's HTML (``deck_html``) as its PDF: drawn by the process's print server where it has one and it
    is free (a worker's: agents.render.print_server), so the interpreter lock stays with the run's other
    work meanwhile; else here. WeasyPrint is imported here, on the first render, not when a process imports
    the deck pipeline: it takes about a second and every web process and command would pay it
    (agents.render.pdf's own note)."""
    from agents.render.print_server import pdf_of

    # The deck links nothing but its data: attachment, so it is printed serving no static file; and never
    # behind a version's print: a deck's drawing is on its run's path, a print is not.
    return pdf_of(html, base_url=None, static_root=None, wait=False)


def _slide_html(deck: Deck, slide: Slide) -> str:
    layout = slide_layout(deck, slide)
    parts = []
    if layout.band is not None:  # the title slide's company line
        parts.append(_box(layout.band, "company", layout.band_pt) + f"{_text(company_line(deck))}</div>")
    parts.append(_box(layout.title, "title", layout.title_pt) + f"{_text(slide.title)}</div>")
    parts.append(_box(layout.takeaway, "takeaway", layout.takeaway_pt) + f"{_text(slide.takeaway)}</div>")
    if layout.bullets is not None:
        items = "".join(f"<li>{_bullet_html(bullet)}</li>" for bullet in slide.bullets)
        parts.append(_box(layout.bullets, "bullets", layout.bullets_pt) + f"<ul>{items}</ul></div>")
    if slide.table is not None:
        parts.append(_table_html(slide.table, layout))
    if slide.chart is not None and layout.chart is not None:
        parts.append(_chart_html(slide.chart, layout.chart, layout, deck.theme))
    footer = "".join(f"<p>{_text(line)}</p>" for line in footer_lines(deck, slide))
    parts.append(_box(layout.footer, "footer", layout.footer_pt) + f"{footer}</div>")
    return f'<section class="slide" id="slide-{slide.number}">{"".join(parts)}</section>'


def _table_html(table: Table, layout: SlideLayout) -> str:
    assert layout.table is not None and layout.table_grid is not None
    grid = layout.table_grid
    row_height = f'style="height:{grid.height / (len(table.rows) + 1):.3f}in"'
    columns = "".join(f'<col style="width:{share * 100:.1f}%">' for share in TABLE_COLUMN_SHARES)
    header = "".join(f"<th>{_text(name)}</th>" for name in TABLE_HEADER)
    rows = "".join(
        f'<tr class="{"band" if index % 2 == 0 else "plain"}" {row_height}>'
        + "".join(f"<td>{_text(value)}</td>" for value in table_row(row))
        + "</tr>"
        for index, row in enumerate(table.rows)
    )
    caption = _box(layout.table.caption(layout.caption_pt), "caption", layout.caption_pt)
    return (
        f"{caption}{_text(table.title)}</div>"
        f'<div class="chart-area" style="{_place(grid)};font-size:{layout.table_pt}pt">'
        f"<table><colgroup>{columns}</colgroup><thead><tr {row_height}>{header}</tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _chart_html(chart: Chart, box: Box, layout: SlideLayout, theme: Theme) -> str:
    caption = _box(box.caption(layout.caption_pt), "caption", layout.caption_pt)
    area = box.below_caption(layout.caption_pt)
    palette = charts.Palette(accent=theme.accent, negative=theme.negative, ink=theme.ink, muted=theme.muted)
    width, height = round(area.width * _CSS_PX_PER_IN), round(area.height * _CSS_PX_PER_IN)
    svg = charts.chart_svg(chart, width, height, palette)
    return f'{caption}{_text(chart.title)}</div><div class="chart-area" style="{_place(area)}">{svg}</div>'


def _box(box: Box, kind: str, size_pt: float) -> str:
    return f'<div class="box {kind}" style="{_place(box)};font-size:{size_pt}pt">'


def _place(box: Box) -> str:
    return f"left:{box.left:.3f}in;top:{box.top:.3f}in;width:{box.width:.3f}in;height:{box.height:.3f}in"


def _text(text: str) -> str:
    return escape(clean_render_text(text), quote=True)


def _bullet_html(bullet: Bullet) -> str:
    """A bullet's text, each figure's display kept on one line: WeasyPrint broke "6.13 USD/shares" after the
    slash, and the fact-check read "6.13" back as a number nobody placed."""
    html = _text(bullet_text(bullet))
    for display in dict.fromkeys(figure.display for figure in (*bullet.inline, *bullet.figures)):
        shown = _text(display)
        html = html.replace(shown, f'<span class="figure">{shown}</span>')
    return html
