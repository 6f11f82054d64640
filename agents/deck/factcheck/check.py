"""T5: every figure a rendered deck prints, checked against the fact store (seed 001, the Truth invariant).

The embedded deck (agents.deck.render.embedded) says which facts each slide cites, the ``FactLookup`` (the
fact store) says what each fact is, and the file's text says what a reader sees. A slide's figures are
matched like this, so that one wrong number is one row of the report:

1. a printed figure that reads exactly as the expected display of a placement not yet matched is ``ok``
   (expected = ``display(value, unit)`` of the looked-up fact, never the embedded JSON's own ``display``:
   a file whose JSON and text were edited together is still caught); when a period is printed beside it
   ("FY2024"), it must be the fact's period as well;
2. a printed figure that reads as a placement's display with another period beside it is a ``mismatch``,
   its text and expected value followed by the two periods: "USD 391,035 M (FY2023)";
3. any other printed figure is a ``mismatch`` against the most similar unmatched placement of the same
   kind (currency, percent, per-share, plain), or ``unresolved`` when none is left (a number nobody cites);
4. a placement printed nowhere is a ``mismatch`` with text "" (a figure removed); a placement whose fact
   the lookup does not know is ``unresolved``, with the figure printed for it when there is one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.deck.factcheck.extract import (
    FoundFigure,
    SlideText,
    compact,
    figure_kind,
    figures_in,
    refuse_oversized,
    slide_texts,
)
from agents.deck.render.embedded import read_deck
from agents.deck.spec import Deck, Figure, display

Status = Literal["ok", "mismatch", "unresolved"]


class KnownFact(BaseModel):
    """What the fact store says a fact is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: Decimal
    unit: str
    period: str  # as a deck labels it: "FY2024", "FY2025Q3", "as of 2026-10-30"


FactLookup = Callable[[Collection[str]], Mapping[str, KnownFact]]


class FigureCheck(BaseModel):
    slide: int
    text: str  # the figure as printed; "" when the slide does not print it
    fact_id: str | None
    expected: str | None  # what the fact store says the slide must print
    status: Status


class FactCheckReport(BaseModel):
    ok: bool
    figures: list[FigureCheck]

    def problems(self) -> list[FigureCheck]:
        return [figure for figure in self.figures if figure.status != "ok"]


def check(data: bytes, facts: FactLookup, *, page_keys: Sequence[str] = ()) -> FactCheckReport:
    """The report for a rendered PPTX or PDF. Raises ``NoEmbeddedDeck`` (a file that is not a rendered
    deck) or ``UnreadableFile`` (its slides cannot be read, or it is larger than any deck: ``TooLarge``),
    both ``ValueError``. The size caps come first: nothing is unzipped or parsed past them. ``page_keys``:
    a PDF's pages' keys, where the caller rendered it (``extract.slide_texts``)."""
    refuse_oversized(data)
    deck = read_deck(data)
    return check_texts(deck, slide_texts(data, page_keys=page_keys), facts)


def check_texts(deck: Deck, slides: Sequence[SlideText], facts: FactLookup) -> FactCheckReport:
    """Slide N of the file against ``deck.slides[N - 1]``: a slide the file lacks has all its figures
    removed, a slide the deck lacks has only figures nobody placed."""
    known = facts(sorted(deck.figures()))
    texts = {text.number: text for text in slides}
    count = max(len(deck.slides), max(texts, default=0))
    rows: list[FigureCheck] = []
    for number in range(1, count + 1):
        placed = deck.slides[number - 1].figures() if number <= len(deck.slides) else []
        lines = texts[number].lines if number in texts else ()
        found = [figure for line in lines for figure in figures_in(line)]
        rows.extend(_check_slide(number, _placements(placed, known), found))
    return FactCheckReport(ok=all(row.status == "ok" for row in rows), figures=rows)


@dataclass
class _Placement:
    """A figure the deck placed on the slide, with what the fact store says it must read."""

    order: int
    figure: Figure
    fact: KnownFact | None
    used: bool = False

    @property
    def expected(self) -> str | None:
        fact = self.fact
        return display(fact.value, fact.unit, fact_id=self.figure.fact_id) if fact is not None else None


def _placements(placed: Iterable[Figure], known: Mapping[str, KnownFact]) -> list[_Placement]:
    return [_Placement(order, figure, known.get(figure.fact_id)) for order, figure in enumerate(placed)]


def _check_slide(number: int, placements: list[_Placement], found: list[FoundFigure]) -> list[FigureCheck]:
    rows: dict[int, FigureCheck] = {}  # by the printed figure's position: the report reads in slide order

    def settle(index: int, placement: _Placement | None, status: Status, *, shifted: bool = False) -> None:
        text, expected = found[index].text, placement.expected if placement else None
        if placement is not None:
            placement.used = True
        if shifted and placement is not None and placement.fact is not None:
            text, expected = f"{text} ({found[index].period})", f"{expected} ({placement.fact.period})"
        fact_id = placement.figure.fact_id if placement else None
        rows[index] = FigureCheck(slide=number, text=text, fact_id=fact_id, expected=expected, status=status)

    def still_open() -> list[int]:
        return [index for index in range(len(found)) if index not in rows]

    # 1. Exact readings, those with a period beside them first: the period says which of two equal
    # displays (the same value in two years) a figure is.
    for index in sorted(still_open(), key=lambda index: found[index].period is None):
        if (same := _first(placements, found[index], _reads_in_period)) is not None:
            settle(index, same, "ok")
    # A figure cited from a fact the store does not know: its row says so, whatever it prints.
    for index in still_open():
        if (unknown := _first(placements, found[index], _printed_for_unknown)) is not None:
            settle(index, unknown, "unresolved")
    # 2. The right figure with another period beside it.
    for index in still_open():
        if (shifted := _first(placements, found[index], _reads_as)) is not None:
            settle(index, shifted, "mismatch", shifted=True)
    # 3. Any other number: against the most similar open placement of its kind, if any.
    for index in still_open():
        nearest = _most_similar(found[index], placements)
        settle(index, nearest, "mismatch" if nearest is not None else "unresolved")
    # 4. Placements nothing printed.
    removed = [
        FigureCheck(
            slide=number,
            text="",
            fact_id=placement.figure.fact_id,
            expected=placement.expected,
            status="mismatch" if placement.fact is not None else "unresolved",
        )
        for placement in placements
        if not placement.used
    ]
    return [rows[index] for index in sorted(rows)] + removed


def _first(
    placements: list[_Placement], found: FoundFigure, test: Callable[[FoundFigure, _Placement], bool]
) -> _Placement | None:
    return next((p for p in placements if not p.used and test(found, p)), None)


def _reads_in_period(found: FoundFigure, placement: _Placement) -> bool:
    return _reads_as(found, placement) and _period_fits(found, placement)


def _printed_for_unknown(found: FoundFigure, placement: _Placement) -> bool:
    return placement.fact is None and compact(found.text) == compact(placement.figure.display)


def _reads_as(found: FoundFigure, placement: _Placement) -> bool:
    return placement.expected is not None and compact(found.text) == compact(placement.expected)


def _period_fits(found: FoundFigure, placement: _Placement) -> bool:
    if found.period is None or placement.fact is None:
        return True
    return compact(found.period).casefold() == compact(placement.fact.period).casefold()


def _most_similar(found: FoundFigure, placements: list[_Placement]) -> _Placement | None:
    """The open placement of the same kind whose expected display is closest to what was printed (a digit
    changed reads as that figure, not as its neighbour); the first in slide order among equals."""
    candidates = [
        placement
        for placement in placements
        if not placement.used
        and placement.expected is not None
        and figure_kind(placement.expected) == found.kind
    ]
    if not candidates:
        return None
    printed = compact(found.text)
    return max(
        candidates,
        key=lambda placement: (
            difflib.SequenceMatcher(None, printed, compact(placement.expected or "")).ratio(),
            -placement.order,
        ),
    )
