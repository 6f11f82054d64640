"""Who a company's competitors are, by rule: the constituents of the S&P 500 in the same GICS sub-industry
(``reference/sp500_constituents.csv``, ODC-PDDL), in the file's order. No model decides who competes."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agents.data.errors import MalformedData


@dataclass(frozen=True)
class Constituent:
    ticker: str
    name: str
    sector: str
    sub_industry: str


@lru_cache(maxsize=4)
def constituents(path: Path) -> tuple[Constituent, ...]:
    """The file's rows; none when it is absent (a desk without the list names no competitors)."""
    if not path.is_file():
        return ()
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return tuple(
                Constituent(
                    ticker=row["Symbol"].strip().upper(),
                    name=row["Security"].strip(),
                    sector=row["GICS Sector"].strip(),
                    sub_industry=row["GICS Sub-Industry"].strip(),
                )
                for row in csv.DictReader(handle)
            )
    except (KeyError, csv.Error, UnicodeDecodeError) as exc:
        raise MalformedData(f"{path} is not the S&P 500 constituents file: {exc}") from exc


def peers(path: Path, ticker: str, *, limit: int = 6) -> tuple[str, list[str]]:
    """The company's GICS sub-industry and up to ``limit`` other constituents in it ("" and none when the
    company is not in the list)."""
    rows = constituents(path)
    mine = next((row for row in rows if row.ticker == ticker.upper()), None)
    if mine is None:
        return "", []
    others = [
        row.ticker for row in rows if row.sub_industry == mine.sub_industry and row.ticker != mine.ticker
    ]
    return mine.sub_industry, others[:limit]
