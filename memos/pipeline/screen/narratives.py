"""The screen's model prose read against the figures it cites (issue 32, 5): the shared reading of
agents.text.figure_claims, so a sector's story cannot say "alpha has been rising" over a fall, nor call the
RSI the alpha, any more than a memo or a deck may. A sentence that fails is withheld with code's reason, noted
where the step lists what it withheld; what is left stands as written."""

from __future__ import annotations

from collections.abc import Mapping

from agents.screen.display import figure_text, metric_of
from agents.screen.prose import screen_shown
from agents.screen.quant import QuantOutput
from agents.text.figure_claims import CitedFigure, cited_figure, read_text
from agents.text.figures import Ids
from agents.text.scripts import Language
from agents.text.shown import Shown


def cited_figures(quant: QuantOutput) -> dict[str, CitedFigure]:
    """Every figure code computed for the screen, as a claim's reading wants it (its period is the id's last
    part: the as-of date)."""
    found: dict[str, CitedFigure] = {}
    for figure in quant.figures:
        read = cited_figure(
            fact_id=figure.fact_id,
            metric=metric_of(figure.fact_id),
            period=figure.fact_id.rsplit(":", 1)[-1],
            value=repr(figure.value),
            shown=figure_text(figure),
            unit=figure.unit,
        )
        if read is not None:
            found[figure.fact_id] = read
    return found


def narrative(text: str, known: Ids, language: Language, figures: Mapping[str, CitedFigure]) -> Shown:
    """``text`` as a reader sees it (agents.screen.prose: a filler in a figure's place withheld too), less
    each sentence its cited figures contradict."""
    seen = screen_shown(text, frozenset(known), language=language)
    read = read_text(seen.text, figures)
    if not read.withheld:
        return seen
    note = "; ".join(part for part in (seen.note, *read.withheld) if part)
    return Shown(read.text, note, seen.withheld + len(read.withheld))
