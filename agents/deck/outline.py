"""A deck as the judge, the planner and the reviser read it: slide by slide, figures as code printed them.

Also the judge's quotes checked against it: each score's evidence must be words of the deck, verbatim
(what a copy may change without changing the words aside: agents.text.quotes); a quote that is not there is
marked on the run page.
"""

from __future__ import annotations

from collections.abc import Iterable

from agents.data.edgar.segments import is_segment
from agents.deck.schemas import (
    DeckDraft,
    R1Score,
    R2Score,
    SlideDraft,
)
from agents.deck.spec import CODE_SLIDES, Deck, Figure, Slide, bullet_text, figure_text
from agents.text.quotes import fold, folded_quote
from agents.text.sentences import within_bounds


def slide_outline(slide: Slide) -> str:
    written = ", written by the desk's code" if slide.kind in CODE_SLIDES else ""
    lines = [
        f"Slide {slide.number} [{slide.section}{written}] {slide.title}",
        f"  Takeaway: {slide.takeaway}",
    ]
    for bullet in slide.bullets:
        lines.append(f"  - {bullet_text(bullet)}")
    if slide.table is not None:
        lines.append(f"  Table: {slide.table.title}")
        lines.extend(f"    | {figure_text(row)} | {row.source}" for row in slide.table.rows)
    if slide.chart is not None:
        points = ", ".join(
            f"{slide.chart.category(index)} {point.display}" for index, point in enumerate(slide.chart.points)
        )
        lines.append(f"  Chart ({slide.chart.kind}): {slide.chart.title}: {points}")
    return "\n".join(lines)


def deck_lines(deck: Deck) -> list[str]:
    """The deck's words line by line as the judge reads them: its title and thesis, then each slide's title,
    takeaway, bullets (with their printed figures), table and chart titles."""
    lines = [deck.title, deck.thesis]
    for slide in deck.slides:
        lines += [slide.title, slide.takeaway, *(bullet_text(bullet) for bullet in slide.bullets)]
        lines += [part.title for part in (slide.table, slide.chart) if part is not None]
    return [line for line in lines if line.strip()]


def outline(deck: Deck) -> str:
    head = [f"Deck: {deck.title}", f"Thesis: {deck.thesis}"]
    return "\n".join(head + [slide_outline(slide) for slide in deck.slides])


def draft_of(deck: Deck) -> DeckDraft:
    """The resolved deck as a draft again (fact ids, no figures): what the reviser edits."""
    return DeckDraft(
        title=deck.title, thesis=deck.thesis, slides=[slide_draft(slide) for slide in deck.drafted()]
    )


def slide_draft(slide: Slide) -> SlideDraft:
    """A resolved slide as the draft the reviser edits. A text code withheld (it typed a figure) is empty
    here; the schema wants words, so it gets the plainest true ones code has: the section's name, or the
    labels of the figures it shows. (A slide left with an empty title or takeaway never reaches this: the
    lint marks it broken, so it is never the accepted best.)"""

    def labels(figures: tuple[Figure, ...]) -> str:
        return ", ".join(dict.fromkeys(f.label for f in figures)) or slide.section

    table = (
        {
            "title": slide.table.title or labels(slide.table.rows),
            "rows": [f.fact_id for f in slide.table.rows],
        }
        # Revenue by line is code's table (it may hold more lines than a drafted table may): drawn again.
        if slide.table is not None
        and len(slide.table.rows) >= 2
        and not all(is_segment(f.fact_id) for f in slide.table.rows)
        else None
    )
    chart = (
        {
            "title": slide.chart.title or labels(slide.chart.points),
            "kind": slide.chart.kind,
            "points": [f.fact_id for f in slide.chart.points],
        }
        # Code draws its own charts again (the bridges, revenue by line).
        if slide.chart is not None and slide.chart.kind != "bridge" and not slide.chart.parts
        else None
    )
    drafted = {
        "section": slide.section,
        "title": slide.title or slide.section,
        "takeaway": slide.takeaway or slide.section,
        "bullets": [
            {"text": bullet.text or labels(bullet.figures), "figures": [f.fact_id for f in bullet.figures]}
            for bullet in slide.bullets
        ],
        "table": table,
        "chart": chart,
    }
    # A resolved text may be longer than a draft's bound: code printed figures into it, or a re-asked
    # sentence ran longer than the first. Cut back to the whole sentences that fit, as a model's answer is.
    return SlideDraft.model_validate(within_bounds(SlideDraft, drafted))


def quote_found(quote: str, deck: Deck) -> bool:
    """Whether the judge's quote is the deck's words, folded as every workflow folds a quote
    (agents.text.quotes: blanks, case, typographic quotes and dashes, the ends' marks), and with no minimum
    length: a judge may quote a slide's short title, one of the lines its schema offers."""
    return folded_quote(quote) in fold(outline(deck))


def quotes_of(scores: Iterable[R1Score | R2Score]) -> list[tuple[str, str]]:
    return [(score.dimension, score.evidence) for score in scores]
