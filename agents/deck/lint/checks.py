"""T7 render lint: what is broken on a rendered deck, found by code and named by slide and shape.

| Rule                  | Fires when                                                                  |
|-----------------------|-----------------------------------------------------------------------------|
| unreadable            | the file (or one slide of it) cannot be opened                              |
| missing_slide         | a slide of the given spec has no slide in the file (the renderer draws one |
|                       | slide per spec slide, in order)                                             |
| off_slide             | a shape lies partly outside the slide                                       |
| overlap               | two shapes' boxes intersect (but a text-less backdrop behind a shape it     |
|                       | wholly contains)                                                            |
| overflow              | a box's or table cell's text, measured with the deck font, is taller (or,  |
|                       | not wrapping, wider) than the box inside its insets (lint_measure)          |
| wall_of_text          | too many words on a slide or in a paragraph, points or lines in a box, rows |
|                       | in a table (the thresholds and their reasons: lint_text)                    |
| empty_text            | an empty or missing title, an empty takeaway, an empty placeholder          |
| placeholder_text      | lorem ipsum, TBD, TODO, Click to add text, [placeholder], XXX, insert..here |
| garbled_text          | control characters, U+FFFD or _xHHHH_ escapes in the text                   |
| chart_missing_figures | a chart without points, a point without a value; given the spec, a chart   |
|                       | whose data labels do not read its figures, or a spec chart not drawn        |

The loop compares laps with ``finding_counts``: R2's visual-integrity invariant is "no new walls of text,
no chart that carried a number removed".
"""

from __future__ import annotations

import io
import zipfile
from itertools import combinations
from typing import Any

from lxml import etree
from pptx import Presentation
from pptx.oxml.ns import qn

from agents.deck.lint.findings import RULES, SLIDE_WIDE, Finding, Rule, finding_counts
from agents.deck.lint.text import MAX_SLIDE_WORDS, MAX_SUMMARY_WORDS, quote, text_findings
from agents.deck.spec import Deck, Slide
from agents.text.cleaning import clean_render_text

__all__ = ["RULES", "SLIDE_WIDE", "Finding", "Rule", "finding_counts", "lint_pptx"]

EMU_PER_INCH = 914400
# What python-pptx raises on a package it cannot read: not a zip, broken XML, a part or relationship missing.
_UNREADABLE = (zipfile.BadZipFile, etree.XMLSyntaxError, KeyError, ValueError)


def lint_pptx(data: bytes, deck: Deck | None = None) -> list[Finding]:
    """Every finding on the rendered deck, in slide order. With ``deck`` (the spec the file was drawn from),
    charts are checked to carry its figures and every spec slide to be present."""
    try:
        presentation: Any = Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
    except _UNREADABLE as error:
        return [Finding(rule="unreadable", slide=0, shape=SLIDE_WIDE, message=_error_text(error))]
    width, height = presentation.slide_width, presentation.slide_height
    spec_slides: tuple[Slide, ...] = deck.slides if deck is not None else ()
    found: list[Finding] = []
    for index, slide in enumerate(slides):
        number = index + 1
        spec_slide = spec_slides[index] if index < len(spec_slides) else None
        try:
            found.extend(_geometry_findings(number, slide, width, height))
            # The sources slide is a reference list, read when checking a figure, not a slide to take in at a
            # glance: its words are not counted (each box is still checked for overflow and placeholders).
            found.extend(text_findings(number, slide, max_words=_word_limit(spec_slide)))
            found.extend(_chart_findings(number, slide, spec_slide))
        except _UNREADABLE as error:
            found.append(
                Finding(rule="unreadable", slide=number, shape=SLIDE_WIDE, message=_error_text(error))
            )
    for spec_slide in spec_slides[len(slides) :]:
        message = f"spec slide {spec_slide.number} ('{quote(spec_slide.title)}') has no slide in the file"
        found.append(Finding(rule="missing_slide", slide=0, shape=SLIDE_WIDE, message=message))
    return sorted(found, key=lambda finding: finding.slide)


def _word_limit(spec_slide: Slide | None) -> int | None:
    """The sources slide is a reference list, read when checking a figure, not taken in at a glance: its
    words are not counted (each box is still checked). The executive summary and the risks slide may say
    more than a slide: each states several findings with their figures, as does the memo's "what to watch"."""
    kind = spec_slide.kind if spec_slide is not None else "section"
    if kind == "sources":
        return None
    return MAX_SUMMARY_WORDS if kind in ("summary", "risks", "watch") else MAX_SLIDE_WORDS


def _error_text(error: Exception) -> str:
    return f"the file cannot be read as a presentation ({type(error).__name__}: {quote(str(error))})"


def _geometry_findings(number: int, slide: Any, slide_width: int, slide_height: int) -> list[Finding]:
    placed = [
        shape for shape in slide.shapes if None not in (shape.left, shape.top, shape.width, shape.height)
    ]
    found: list[Finding] = []
    for shape in placed:
        outside = _outside(shape, slide_width, slide_height)
        if outside:
            found.append(Finding(rule="off_slide", slide=number, shape=shape.name, message=outside))
    # Shapes come in z-order, so in each pair ``behind`` is drawn first.
    for behind, front in combinations(placed, 2):
        across = min(behind.left + behind.width, front.left + front.width) - max(behind.left, front.left)
        down = min(behind.top + behind.height, front.top + front.height) - max(behind.top, front.top)
        if across <= 0 or down <= 0 or (_is_backdrop(behind) and _contains(behind, front)):
            continue
        message = f"overlaps '{front.name}' by {across / EMU_PER_INCH:.2f} in x {down / EMU_PER_INCH:.2f} in"
        found.append(Finding(rule="overlap", slide=number, shape=behind.name, message=message))
    return found


def _outside(shape: Any, slide_width: int, slide_height: int) -> str:
    beyond = {
        "left": -shape.left,
        "top": -shape.top,
        "right": shape.left + shape.width - slide_width,
        "bottom": shape.top + shape.height - slide_height,
    }
    edges = [
        f"{distance / EMU_PER_INCH:.2f} in past the {edge} edge"
        for edge, distance in beyond.items()
        if distance > 0
    ]
    return ", ".join(edges)


def _is_backdrop(shape: Any) -> bool:
    """A plain shape with no words of its own (a panel, a card). Drawn behind a shape it wholly contains,
    it frames that shape by design: nothing of either is hidden, since the backdrop has no content to lose
    and the shape in front is painted over it. In front, or only partly around, it is an overlap."""
    if shape.element.tag != qn("p:sp"):
        return False
    return not (shape.has_text_frame and shape.text_frame.text.strip())


def _contains(outer: Any, inner: Any) -> bool:
    return bool(
        outer.left <= inner.left
        and outer.top <= inner.top
        and outer.left + outer.width >= inner.left + inner.width
        and outer.top + outer.height >= inner.top + inner.height
    )


def _chart_findings(number: int, slide: Any, spec_slide: Slide | None) -> list[Finding]:
    found: list[Finding] = []

    def add(shape: str, message: str) -> None:
        found.append(Finding(rule="chart_missing_figures", slide=number, shape=shape, message=message))

    charts = [shape for shape in slide.shapes if getattr(shape, "has_chart", False)]
    labels: set[str] = set()
    for shape in charts:
        points = 0
        for plot in shape.chart.plots:
            categories = [str(category) for category in plot.categories]
            for series in plot.series:
                for index, value in enumerate(series.values):
                    points += 1
                    label = series.points[index].data_label
                    if label.has_text_frame:
                        labels.add(_normalised(label.text_frame.text))
                    if value is None:
                        category = categories[index] if index < len(categories) else f"#{index + 1}"
                        add(
                            shape.name,
                            f"the point '{quote(category)}' of '{quote(series.name)}' has no value",
                        )
        if points == 0:
            add(shape.name, "the chart has no points")
    spec_chart = spec_slide.chart if spec_slide is not None else None
    if spec_chart is None:
        return found
    if not charts:
        add(SLIDE_WIDE, f"the spec's chart '{quote(spec_chart.title)}' is not drawn on the slide")
        return found
    missing = [point for point in spec_chart.points if _normalised(point.display) not in labels]
    if missing:
        shown = ", ".join(f"{point.period} {point.display}" for point in missing)
        add(charts[0].name, f"no data label reads the spec's figures: {quote(shown)}")
    return found


def _normalised(text: str) -> str:
    return " ".join(clean_render_text(text).split())
