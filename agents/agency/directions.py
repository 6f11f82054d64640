"""Whether a claim's direction agrees with the figures it cites, by code.

A small model writes "revenue has been declining over the past two years" under two filed revenues that rose.
No number is typed, so no figure check catches it; but the claim cites the figures, and code can read their
direction. A claim that says one metric fell (declined, decreased, dropped ...) while the figures it cites
for that metric rose from the earliest period to the latest, or the reverse, contradicts its own evidence:
code withholds it and says why, with both figures. The direction claimed is the statement's first direction
word (agents.text.directions, which says which words count and why): what the figures did comes first ("has
been declining"), what the writer makes of it after ("a need to improve"). Only a claim about one metric is
checked (a claim citing several may say each went its own way), and only over at least two of its periods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from agents.text.directions import first_direction


@dataclass(frozen=True)
class Figure:
    fact_id: str
    metric: str
    when: date
    value: Decimal
    shown: str  # as a reader sees it ("USD 391,035 M (10-K 2024-11-01)")


def direction_problem(statement: str, figures: Sequence[Figure]) -> str:
    """Code's words for a claim whose direction its cited figures contradict, or ""."""
    said, _ = first_direction(statement)
    if not said:
        return ""
    by_metric: dict[str, list[Figure]] = {}
    for figure in figures:
        by_metric.setdefault(figure.metric, []).append(figure)
    if len(by_metric) != 1:
        return ""
    for metric, cited in by_metric.items():
        dated = sorted({figure.when: figure for figure in cited}.values(), key=lambda figure: figure.when)
        if len(dated) < 2 or dated[0].value == dated[-1].value:
            continue
        went = "up" if dated[-1].value > dated[0].value else "down"
        if went != said:
            name = metric.replace("_", " ")
            verb = "rose" if went == "up" else "fell"
            return (
                f"it says {name} went {said}, but the figures it cites {verb}: {dated[0].shown} "
                f"({dated[0].fact_id}) to {dated[-1].shown} ({dated[-1].fact_id})"
            )
    return ""
