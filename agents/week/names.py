"""Which names of the week's screen get a closer look, and what each is asked: decided by code.

Issue 33's rule: the REDs first, then the YELLOWs, each ordered by the largest absolute alpha of the week
(the move the market does not explain), up to the week's bound; GREEN names need no closer look. Every
flagged name left out is named with its reason. The question carries no figure: a model may repeat only
what a fact backs, and the digest prints the figures from their facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

ORDER = ("RED", "YELLOW")  # the flags that get a closer look, the most urgent first

WHY = {
    "RED": "it moved on its own by more than the market and its sector explain, and the news the desk read "
    "does not account for it",
    "YELLOW": "its signals deserve watching but the evidence is not strong enough to clear it",
}


@dataclass(frozen=True)
class Candidate:
    symbol: str
    flag: str
    alpha_1w: float | None  # the week's alpha residual, as a ratio; None where the prices held none


@dataclass(frozen=True)
class Chosen:
    symbol: str
    flag: str
    rank: int  # 1 for the first look


@dataclass(frozen=True)
class Left:
    symbol: str
    reason: str


def _size(alpha: float | None) -> float:
    return abs(alpha) if alpha is not None else -1.0  # a name with no alpha goes after every measured one


def choose(candidates: Sequence[Candidate], bound: int) -> tuple[list[Chosen], list[Left]]:
    """The names to look at (REDs, then YELLOWs, each by |alpha| from the largest; ties by symbol) and the
    flagged names left out with their reason."""
    flagged = [c for c in candidates if c.flag in ORDER]
    ordered = sorted(flagged, key=lambda c: (ORDER.index(c.flag), -_size(c.alpha_1w), c.symbol))
    chosen = [Chosen(c.symbol, c.flag, rank) for rank, c in enumerate(ordered[: max(0, bound)], start=1)]
    left = [
        Left(
            c.symbol,
            f"flagged {c.flag}, after the week's bound of {bound} closer look{'' if bound == 1 else 's'} "
            "(REDs first, then YELLOWs, each by the size of its own move)",
        )
        for c in ordered[max(0, bound) :]
    ]
    return chosen, left


def question(symbol: str, flag: str, as_of: date) -> str:
    """What the week asks of a closer look at ``symbol``, written by code from its flag; no figure in it."""
    why = WHY.get(flag, "the screen flagged it")
    return (
        f"The desk's screen flagged {symbol} {flag} for the week ending {as_of:%A %d %B %Y}: {why}. "
        f"Say what drove {symbol}'s own move, whether the case for the position still holds, and what would "
        "change that."
    )
