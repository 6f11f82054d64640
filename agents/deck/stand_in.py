"""Code's words for a drafted slide whose title or takeaway the resolver withheld whole.

A small model's sentence is withheld when it types a figure no fact backs or leaves a figure's place empty;
when that was the slide's whole title or takeaway, the slide would go out with an empty box, which the render
lint calls broken and the gate rejects, losing every good word on the slide with it. Code stands in with
words true of the slide's own figures by construction: which way each metric moved between its two latest
fiscal years (or a quarter and the same quarter a year before), decided by comparing the fact store's values.
The words carry no number of their own; the periods are labels, not figures (agents.text.figures).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agents.deck.spec import Figure, Slide

MAX_MOVES = 3


def slide_figures(slide: Slide) -> list[Figure]:
    """The figures a slide shows, chart first (the slide's point), then its table and its bullets."""
    chart = slide.chart.points if slide.chart is not None and slide.chart.kind != "bridge" else ()
    table = slide.table.rows if slide.table is not None else ()
    bullets = (f for bullet in slide.bullets for f in (*bullet.inline, *bullet.figures))
    return list(dict.fromkeys((*chart, *table, *bullets)))


def moves(figures: Iterable[Figure]) -> list[str]:
    """ "Revenue rose in FY2025" for each metric the figures hold in two comparable periods, in the order the
    figures name them: the latest fiscal year against the one before, else the latest quarter against the
    same quarter a year before."""
    by_metric: dict[str, list[Figure]] = {}
    for figure in figures:
        by_metric.setdefault(figure.label, []).append(figure)
    found = []
    for label, held in by_metric.items():
        pair = _annual_pair(held) or _quarter_pair(held)
        if pair is None:
            continue
        earlier, later = pair
        change = later.decimal - earlier.decimal
        verb = "rose" if change > 0 else "fell" if change < 0 else "held"
        found.append(f"{label} {verb} in {later.period}")
    return found


def stand_in_title(slide: Slide) -> str:
    """The slide's first move as an action title, else its section's name."""
    found = moves(slide_figures(slide))
    return found[0] if found else slide.section


def stand_in_takeaway(slide: Slide) -> str:
    """Up to three moves in one sentence ("Revenue rose in FY2025, operating margin fell in FY2025 and free
    cash flow rose in FY2025."), else what the slide shows, by its figures' names."""
    found = moves(slide_figures(slide))[:MAX_MOVES]
    if not found:
        labels = list(dict.fromkeys(lowered(f.label) for f in slide_figures(slide)))
        return f"{slide.section}: {_listed(labels)}, from the filings." if labels else f"{slide.section}."
    first, *rest = found
    return f"{_listed([first, *(lowered(move) for move in rest)])}."


def _annual_pair(held: Sequence[Figure]) -> tuple[Figure, Figure] | None:
    annual = {when[0]: f for f in held if (when := f.fiscal) is not None and when[1] == 0}
    latest = max(annual, default=None)
    if latest is None or latest - 1 not in annual:
        return None
    return annual[latest - 1], annual[latest]


def _quarter_pair(held: Sequence[Figure]) -> tuple[Figure, Figure] | None:
    quarters = {when: f for f in held if (when := f.fiscal) is not None and when[1] != 0}
    latest = max(quarters, default=None)
    if latest is None:
        return None
    year, quarter = latest
    before = quarters.get((year - 1, quarter))
    return (before, quarters[latest]) if before is not None else None


def lowered(text: str) -> str:
    """A label inside a sentence: "operating margin", but "R&D expense" and "EPS (diluted)" as they are."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def _listed(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
