"""The render lint's text rules, slide by slide: overflow, wall of text, empty, placeholder, garbled text.

Shapes are found by the names the renderer gives them (agents.deck.render.pptx): "Title", "Takeaway", "Footer"
...; a title placeholder also counts as the title, so a deck drawn on a layout is judged the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.oxml.ns import qn

from agents.deck.lint.findings import SLIDE_WIDE, Finding, Rule
from agents.deck.lint.measure import Insets, body_insets, measure, overflows, read_text_box
from agents.text.cleaning import clean_render_text

TITLE_SHAPE = "Title"
TAKEAWAY_SHAPE = "Takeaway"
FOOTER_SHAPE = "Footer"
DECK_BAND_SHAPE = "Company"  # the title slide's company line
# Boxes left out of a slide's word count: the footer is small print (sources, the slide number) that a
# board does not read to get the point, and the title slide's company line is a label, not an argument.
# Both still get the per-box checks.
NOT_SLIDE_PROSE = frozenset({FOOTER_SHAPE, DECK_BAND_SHAPE})
_TITLE_PLACEHOLDERS = frozenset({PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE})

# Walls of text. A board slide is meant to be grasped in under ten seconds (R2 "visual digestibility"); at
# the 200-250 words a minute executives read, that is well under 60 words, title and takeaway included.
MAX_SLIDE_WORDS = 60
# The executive summary states the recommendation, the thesis and three reasons with their figures: the one
# slide a board reads rather than glances at (a consulting deck's summary runs 80-120 words).
MAX_SUMMARY_WORDS = 100
# A bullet of more than 30 words is a paragraph: three lines or more at board sizes, read rather than seen.
MAX_PARAGRAPH_WORDS = 30
# More than six points in one box is a list nobody holds in mind ("six by six", the presenters' rule).
MAX_PARAGRAPHS_PER_SHAPE = 6
# Beyond ten wrapped lines in one box the eye reads line by line instead of taking the slide in.
MAX_LINES_PER_SHAPE = 10
# A header and eight figures is as much as a table on a board slide carries; more belongs in an appendix.
MAX_TABLE_ROWS = 9

# Words left by a template or a model that never got the real text (case-insensitive).
PLACEHOLDER_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\blorem ipsum\b",
        r"\b(?:TBD|TBC|TODO|FIXME|TKTK)\b",
        r"\bclick to (?:add|edit) (?:text|title|subtitle|notes)\b",
        r"[\[<{]\s*(?:placeholder|insert\b[^\]>}]*)\s*[\]>}]",
        r"\bX{3,}\b",
        r"\binsert\b[^.\n]{0,40}?\bhere\b",
        r"\{\{[^}]*\}\}",  # an unrendered template variable
    )
)
# Control characters, U+FFFD (what a broken encoding leaves) and python-pptx's escapes of control characters.
# Vertical tab is left out: python-pptx reads a soft line break (<a:br/>) as "\v".
_GARBLED = re.compile(r"[\x00-\x08\x0c\x0e-\x1f\x7f-\x9f\ufffd]|_x[0-9A-Fa-f]{4}_")
_WORD = re.compile(r"\S*[^\W_]\S*")
_QUOTE_CHARS = 60

_Add = Callable[[Rule, str, str], None]  # records one finding on the slide being linted


def text_findings(number: int, slide: Any, *, max_words: int | None = MAX_SLIDE_WORDS) -> list[Finding]:
    """The slide's text findings; ``max_words`` None counts no words (a reference list)."""
    found: list[Finding] = []

    def add(rule: Rule, shape: str, message: str) -> None:
        found.append(Finding(rule=rule, slide=number, shape=shape, message=message))

    slide_words = 0
    has_title = False
    for shape in _shapes(slide.shapes):
        if shape.has_text_frame:
            text = shape.text_frame.text
            is_title = shape.name == TITLE_SHAPE or _is_title_placeholder(shape)
            has_title = has_title or is_title
            if shape.name not in NOT_SLIDE_PROSE:
                slide_words += count_words(text)
            if not text.strip() and (is_title or shape.name == TAKEAWAY_SHAPE):
                add("empty_text", shape.name, f"the {'title' if is_title else 'takeaway'} is empty")
            elif not text.strip() and shape.is_placeholder:
                add("empty_text", shape.name, "an empty placeholder (an editor shows 'Click to add text')")
            _shape_text_rules(shape, text, add)
        elif getattr(shape, "has_table", False):
            _table_rules(shape, add)
    if not has_title:
        add("empty_text", SLIDE_WIDE, "the slide has no title")
    if max_words is not None and slide_words > max_words:
        add("wall_of_text", SLIDE_WIDE, f"{slide_words} words on the slide (at most {max_words})")
    return found


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def quote(text: str) -> str:
    """Text safe to show in a finding: cleaned, on one line, short."""
    flat = " ".join(clean_render_text(text).split())
    return flat if len(flat) <= _QUOTE_CHARS else flat[: _QUOTE_CHARS - 1].rstrip() + "…"


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape, the members of groups included."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _is_title_placeholder(shape: Any) -> bool:
    return bool(shape.is_placeholder) and shape.placeholder_format.type in _TITLE_PLACEHOLDERS


def _shape_text_rules(shape: Any, text: str, add: _Add) -> None:
    tx_body = shape.text_frame._txBody
    if shape.width is not None and shape.height is not None:
        box = read_text_box(
            tx_body, width_emu=shape.width, height_emu=shape.height, insets=body_insets(tx_body)
        )
        fit = measure(box)
        if overflows(box, fit):
            add(
                "overflow",
                shape.name,
                _overflow_message(box.width_pt, box.height_pt, fit.height_pt, box.wrap),
            )
        if fit.lines > MAX_LINES_PER_SHAPE and shape.name != FOOTER_SHAPE:
            add(
                "wall_of_text",
                shape.name,
                f"{fit.lines} lines of text in one box (at most {MAX_LINES_PER_SHAPE})",
            )
    paragraphs = [paragraph.text for paragraph in shape.text_frame.paragraphs if paragraph.text.strip()]
    if len(paragraphs) > MAX_PARAGRAPHS_PER_SHAPE:
        add(
            "wall_of_text",
            shape.name,
            f"{len(paragraphs)} points in one box (at most {MAX_PARAGRAPHS_PER_SHAPE})",
        )
    for paragraph in paragraphs:
        words = count_words(paragraph)
        if words > MAX_PARAGRAPH_WORDS:
            add(
                "wall_of_text",
                shape.name,
                f"a {words}-word paragraph (at most {MAX_PARAGRAPH_WORDS}): '{quote(paragraph)}'",
            )
    _content_rules(shape.name, text, add)


def _table_rules(shape: Any, add: _Add) -> None:
    table = shape.table
    rows = list(table.rows)
    if len(rows) > MAX_TABLE_ROWS:
        add("wall_of_text", shape.name, f"a table of {len(rows)} rows (at most {MAX_TABLE_ROWS})")
    widths = [column.width for column in table.columns]
    heights = [row.height for row in rows]
    for row_index, row in enumerate(rows):
        for column_index, cell in enumerate(row.cells):
            if cell.is_spanned:
                continue
            where = f"row {row_index + 1}, column {column_index + 1}"
            _content_rules(shape.name, cell.text, add, where=where)
            tx_body = cell._tc.find(qn("a:txBody"))
            if tx_body is None:
                continue
            width = sum(widths[column_index : column_index + cell.span_width])
            height = sum(heights[row_index : row_index + cell.span_height])
            insets = Insets(cell.margin_left, cell.margin_top, cell.margin_right, cell.margin_bottom)
            box = read_text_box(tx_body, width_emu=width, height_emu=height, insets=insets)
            fit = measure(box)
            if overflows(box, fit):
                message = _overflow_message(box.width_pt, box.height_pt, fit.height_pt, box.wrap)
                add("overflow", shape.name, f"{where}: {message}; the row grows past the table's frame")


def _content_rules(shape_name: str, text: str, add: _Add, *, where: str = "") -> None:
    prefix = f"{where}: " if where else ""
    for pattern in PLACEHOLDER_PATTERNS:
        for match in pattern.finditer(text):
            add("placeholder_text", shape_name, f"{prefix}placeholder text '{quote(match.group())}'")
    garbled = _GARBLED.findall(text)
    if garbled:
        shown = ", ".join(sorted({repr(item) for item in garbled}))
        add("garbled_text", shape_name, f"{prefix}{len(garbled)} broken characters ({quote(shown)})")


def _overflow_message(width_pt: float, height_pt: float, needed_pt: float, wrap: bool) -> str:
    if not wrap and needed_pt <= height_pt:
        return f"a line is wider than the box ({width_pt:.0f} pt) and the box does not wrap"
    return (
        f"the text needs {needed_pt:.0f} pt of height; the box has {height_pt:.0f} pt "
        f"inside its insets, {width_pt:.0f} pt wide"
    )
