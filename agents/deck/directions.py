"""Whether a bullet's words go the way its own figures went, by code.

The embedded drafter writes "revenue growth has been strong" beside "Revenue growth FY2023: -2.8%", or
"free cash flow declined" over two figures that rose. No number is typed, so no figure check catches it,
but the bullet carries its figures and code can read them. Only a bullet whose figures are of one metric is
judged (a bullet citing several may say each went its own way), by its first direction word
(agents.text.directions, which says which words count and why):

- of a level (revenue, a margin, free cash flow): the word against the figures' move from their earliest
  period to their latest (fiscal years with fiscal years, quarters with quarters), or into the one period
  the words name from the period before it ("rose in FY2024");
- of a rate (a growth rate, a return) the words name ("growth declined"): the same, on the rates;
- of what the rate measures ("revenue grew", beside its growth rates): the word against the rates' sign,
  wrong only when every one of them is on the other side of zero; and praise of a rate ("strong growth")
  beside rates that are all below zero.

Code withholds the words, keeps the figures, and says why with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.deck.assign import metric_of
from agents.deck.spec import Figure
from agents.deck.stand_in import lowered
from agents.text.directions import first_direction

# Praise of a rate: wrong beside a rate that was below zero in every period shown.
_PRAISE = re.compile(r"\b(?:strong\w*|robust|solid|healthy|impressive)\b", re.IGNORECASE)
# Before the direction word, one of these makes the rate itself the subject ("growth declined").
_RATE_WORD = re.compile(r"\b(?:growth|rates?|returns?|pace)\b", re.IGNORECASE)
# A sentence that turns ("despite", "but") may say its metric went both ways: not judged.
_TURN = re.compile(r"\b(?:despite|although|though|but|however|while|yet|whereas)\b", re.IGNORECASE)
_SIGNED = ("growth", "return")
_PERIOD_IN_TEXT = re.compile(r"\bFY\d{4}(?:Q[1-4])?\b")


def contradiction(text: str, figures: Sequence[Figure]) -> str:
    """Code's words for a bullet whose direction its own figures contradict, or ""."""
    labels = {figure.label for figure in figures}
    if len(labels) != 1 or not text or _TURN.search(text):
        return ""
    label = lowered(labels.pop())
    said, at = first_direction(text)
    if _signed(figures[0]) and not (said and _RATE_WORD.search(text[:at])):
        wrong_side = [f for f in figures if (f.decimal < 0 if said in ("up", "") else f.decimal > 0)]
        claims = said or ("up" if _PRAISE.search(text) else "")
        if claims and len(wrong_side) == len(figures):
            side = "below" if claims == "up" else "above"
            shown = ", ".join(f"{figure.period} {figure.display}" for figure in figures)
            return f"it says {label} went {claims}, but every figure it shows is {side} zero: {shown}"
        return ""
    if not said:
        return ""
    moved = _moved(figures, named=set(_PERIOD_IN_TEXT.findall(text)))
    if moved is None or moved[0] == said:
        return ""
    went, first, last = moved
    verb = "rose" if went == "up" else "fell"
    return (
        f"it says {label} went {said}, but its figures {verb}: "
        f"{first.period} {first.display} to {last.period} {last.display}"
    )


def _signed(figure: Figure) -> bool:
    return any(word in metric_of(figure.fact_id) for word in _SIGNED)


def _moved(figures: Sequence[Figure], named: set[str]) -> tuple[str, Figure, Figure] | None:
    """Which way the figures went, with the two compared: into the one period the words name from the
    period before it ("rose in FY2024"), else from the earliest period to the latest. None unless at least
    two are all fiscal years or all quarters, and the two differ."""
    dated: dict[tuple[int, int], Figure] = {}
    for figure in figures:
        if figure.fiscal is None:
            return None
        dated[figure.fiscal] = figure
    if len(dated) < 2 or len({quarter == 0 for _, quarter in dated}) != 1:
        return None
    order = sorted(dated)
    said_of = [i for i, key in enumerate(order) if dated[key].period in named]
    if len(said_of) == 1 and said_of[0] > 0:
        first, last = dated[order[said_of[0] - 1]], dated[order[said_of[0]]]
    else:
        first, last = dated[order[0]], dated[order[-1]]
    if first.decimal == last.decimal:
        return None
    return ("up" if last.decimal > first.decimal else "down"), first, last
