"""``manage.py quant prices.csv --benchmark spy.csv [--sector xlk.csv] [--as-of D] [--json]``.

The point-in-time quant profile of a price file: only bars up to the as-of date are read. No database.
Bad input (a missing or malformed file, a bad date, an as-of date outside the data) is one line on stderr
and exit status 2, with nothing on stdout.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from agents.data.errors import DataError
from agents.data.prices import load_price_csv
from agents.quant import UNITS, QuantProfile, compute_profile


class Command(BaseCommand):
    help = "Show a stock's quant profile (returns, beta/alpha, SMA distance, RSI14, %B, volume, ATR%)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("prices", type=Path, help="daily prices CSV of the stock")
        parser.add_argument("--benchmark", type=Path, required=True, help="daily prices CSV of the benchmark")
        parser.add_argument("--sector", type=Path, help="daily prices CSV of the sector ETF")
        parser.add_argument("--as-of", dest="as_of", help="YYYY-MM-DD (default: the last session)")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            as_of = _date(options["as_of"]) if options["as_of"] else None
            series = load_price_csv(options["prices"])
            benchmark = load_price_csv(options["benchmark"])
            sector = load_price_csv(options["sector"]) if options["sector"] else None
            profile = compute_profile(series, benchmark=benchmark, sector=sector, as_of=as_of)
        except DataError as exc:
            # One line whatever the message holds (pandas' parser errors carry newlines).
            self.stderr.write("quant: " + " ".join(str(exc).split()))
            raise SystemExit(2) from exc
        if options["json"]:
            self.stdout.write(json.dumps(as_json(profile), indent=2))
        else:
            self.stdout.write(as_table(profile))


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise DataError(f"--as-of must be a date like 2017-06-30, got {text!r}") from exc


def as_json(profile: QuantProfile) -> dict[str, Any]:
    """The documented keys only: who and when, every metric under its ``UNITS`` name, and the notes."""
    return {
        "ticker": profile.ticker,
        "as_of": profile.as_of.isoformat(),
        "benchmark": profile.benchmark,
        "sector": profile.sector,
        **profile.metrics(),
        "notes": list(profile.notes),
    }


def _shown(key: str, value: float | None) -> str:
    """Returns and alphas as signed percentages, volatility as a percentage, the rest as computed."""
    if value is None:
        return "n/a"
    if key.startswith(("return", "alpha")):
        text = f"{value * 100:+.2f} %"
    elif key == "volatility_annualised":
        text = f"{value * 100:.2f} %"
    elif UNITS[key] == "percent":
        text = f"{value:+.2f} %" if key.endswith("distance_pct") else f"{value:.2f} %"
    else:
        text = f"{value:.2f}" if UNITS[key] == "index" else f"{value:.4f}"
    return text


def as_table(profile: QuantProfile) -> str:
    against = f"vs {profile.benchmark}" + (f" and {profile.sector}" if profile.sector else "")
    lines = [f"{profile.ticker}  as of {profile.as_of}  close {profile.close:,.2f}  ({against})", ""]
    width = max(len(key) for key in UNITS)
    for key, value in profile.metrics().items():
        lines.append(f"{key.ljust(width)}  {_shown(key, value)}")
    lines.extend(f"note: {note}" for note in profile.notes)
    return "\n".join(lines)
