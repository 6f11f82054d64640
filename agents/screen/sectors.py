"""Which sector a symbol belongs to (seed 002: "start with name parsing plus a small override table"), decided
in this order: the strategy's own table, the override table below, keywords in the symbol's name, else
"Unclassified". Each answer says which rule gave it, so the dashboard can show how a group was formed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

UNCLASSIFIED = "Unclassified"
How = Literal["table", "override", "keyword", "none"]

# Known cases a name does not settle: the sector SPDR funds ("Select Sector SPDR" names say little a keyword
# can trust: XLY's "Consumer Discretionary" and XLP's "Consumer Staples" share a word), in the sector
# names of the stocknet table, which the bundled universe uses.
OVERRIDES: dict[str, str] = {
    "XLB": "Basic Materials",
    "XLC": "Services",
    "XLE": "Basic Materials",
    "XLF": "Financial",
    "XLI": "Industrial Goods",
    "XLK": "Technology",
    "XLP": "Consumer Goods",
    "XLRE": "Financial",
    "XLU": "Utilities",
    "XLV": "Healthcare",
    "XLY": "Services",
}

# Lower-case words (or word starts) that name a sector, checked in this order: the first sector with a word in
# the name wins, so the more specific families come first.
KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Healthcare", ("health", "pharma", "biotech", "medical", "therapeut", "life science")),
    ("Utilities", ("utilit", "electric", "power")),
    ("Financial", ("financ", "bank", "insur", "capital markets", "reit", "real estate")),
    ("Technology", ("technolog", "tech", "semiconductor", "software", "internet", "micro")),
    ("Basic Materials", ("material", "mining", "chemical", "gold", "metal", "oil", "gas", "energy")),
    ("Industrial Goods", ("industrial", "aerospace", "defense", "machinery", "transport")),
    ("Consumer Goods", ("consumer staples", "beverage", "food", "tobacco", "household")),
    ("Services", ("consumer discretionary", "retail", "communication", "media", "telecom", "services")),
)


@dataclass(frozen=True)
class Assignment:
    symbol: str
    sector: str
    how: How


def sector_of(symbol: str, *, table: Mapping[str, str], name: str = "") -> Assignment:
    key = symbol.upper()
    if table.get(key, "").strip():
        return Assignment(key, table[key].strip(), "table")
    if key in OVERRIDES:
        return Assignment(key, OVERRIDES[key], "override")
    found = _keyword_sector(name)
    if found:
        return Assignment(key, found, "keyword")
    return Assignment(key, UNCLASSIFIED, "none")


def _keyword_sector(name: str) -> str:
    text = " " + re.sub(r"[^a-z]+", " ", name.lower()) + " "
    for sector, words in KEYWORDS:
        if any(f" {word}" in text for word in words):
            return sector
    return ""


def group(assignments: Sequence[Assignment]) -> dict[str, list[str]]:
    """Sector -> its symbols, sectors by name with "Unclassified" last, symbols in the order given."""
    groups: dict[str, list[str]] = {}
    for item in assignments:
        groups.setdefault(item.sector, []).append(item.symbol)
    return dict(sorted(groups.items(), key=lambda pair: (pair[0] == UNCLASSIFIED, pair[0])))
