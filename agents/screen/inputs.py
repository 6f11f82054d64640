"""The inputs a screen reads, and the one seed 002 names that the desk does not hold: the quant analyst's
"market-level data (SPY return, VIX, yield curve proxy)". The desk's bundled data holds no Treasury yield
series it may ship: its only bond series is an aggregate bond fund's daily prices (AGG, from a repository
with no licence file, so for tests only), and a fund's price is not a curve. So the screen says so where it
lists its inputs, and the roles are told the regime is read without it, rather than a proxy being invented.
"""

from __future__ import annotations

from dataclasses import dataclass

YIELD_CURVE = "yield curve"
YIELD_CURVE_GAP = (
    "the desk holds no Treasury yield series it may bundle (its only bond data, an aggregate bond fund's "
    "prices, has no licence to ship and is a fund's price, not a curve); the regime is read without it"
)


@dataclass(frozen=True)
class Input:
    name: str
    held: bool
    detail: str  # where it came from, or why it is not held


def declared_gaps() -> list[Input]:
    """Inputs seed 002 asks for that the desk does not hold, each with the reason."""
    return [Input(YIELD_CURVE, False, YIELD_CURVE_GAP)]
