"""Competitors by rule: the same GICS sub-industry of the S&P 500 list, in the file's order."""

from __future__ import annotations

from pathlib import Path

from agents.data.industries import peers
from tests.agents.data import SNAPSHOT

LIST = SNAPSHOT / "reference" / "sp500_constituents.csv"


def test_competitors_share_the_gics_sub_industry() -> None:
    assert peers(LIST, "NVDA") == ("Semiconductors", ["AMD", "ADI", "AVGO", "FSLR", "INTC", "MRVL"])
    assert peers(LIST, "tsla") == ("Automobile Manufacturers", ["F", "GM"])
    assert peers(LIST, "KO", limit=2) == ("Soft Drinks & Non-alcoholic Beverages", ["KDP", "MNST"])


def test_a_company_outside_the_list_has_no_competitors(tmp_path: Path) -> None:
    assert peers(LIST, "TSM") == ("", [])
    assert peers(tmp_path / "missing.csv", "AAPL") == ("", [])
