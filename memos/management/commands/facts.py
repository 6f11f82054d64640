"""``manage.py facts AAPL``: a company's SEC figures per fiscal year, each with the filing it came from.

The target is a ticker (read through the configured EDGAR source: the snapshot, or SEC when
``DATA_MODE=live``) or the path of a companyfacts ``.json`` / ``.json.gz`` file. ``--json`` prints the
same figures as JSON; ``--save`` also stores every fact (annual, quarterly, derived) in the database.
Bad input (an unknown ticker, a missing or malformed file) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agents.data.edgar import (
    CompanyFactSet,
    FiscalYear,
    facts_from_companyfacts,
    load_company_facts,
    read_companyfacts_file,
)
from agents.data.errors import DataError
from agents.data.types import Fact
from memos.pipeline.data_sources import edgar_source

COLUMNS = ("metric", "value", "unit", "concept", "form", "accession", "filed", "period")


class Command(BaseCommand):
    help = "Show a company's SEC figures per fiscal year, with citations (ticker or companyfacts file)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "target", help="a ticker (AAPL) or the path of a companyfacts .json or .json.gz file"
        )
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument("--save", action="store_true", help="store every fact in the database")
        parser.add_argument(
            "--data-dir",
            type=Path,
            help="read this snapshot root (its edgar/ folder) instead of the configured source",
        )
        parser.add_argument(
            "--ticker", help="the ticker to name a companyfacts file's facts by (default: its CIK)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        target: str = options["target"]
        is_file = _looks_like_path(target)
        if options["ticker"] and not is_file:
            raise CommandError(
                "--ticker names the facts of a companyfacts file; a ticker argument names itself"
            )
        try:
            if is_file:
                fact_set = facts_from_companyfacts(
                    read_companyfacts_file(Path(target)), ticker=options["ticker"]
                )
            else:
                fact_set = load_company_facts(edgar_source(options["data_dir"]), target)
        except DataError as exc:
            self.stderr.write(f"facts: {exc}")
            raise SystemExit(2) from exc

        if options["save"]:
            from memos.pipeline.fact_store import save_company_facts
            from memos.services.surfaces import new_facts_of  # imported here: no database unless saving

            saved = save_company_facts(fact_set)
            new_facts_of(fact_set.ticker)
            (self.stderr if options["json"] else self.stdout).write(
                f"saved {saved} facts for {fact_set.ticker}"
            )
        if options["json"]:
            self.stdout.write(json.dumps(as_json(fact_set), indent=2))
        else:
            self.stdout.write(as_table(fact_set))


def _looks_like_path(target: str) -> bool:
    return target.endswith((".json", ".json.gz")) or "/" in target or "\\" in target


def as_json(fact_set: CompanyFactSet) -> dict[str, Any]:
    return {
        "ticker": fact_set.ticker,
        "cik": fact_set.cik,
        "entity": fact_set.entity,
        "fiscal_years": [
            {
                "fiscal_year": year.fiscal_year,
                "period_start": year.period_start.isoformat(),
                "period_end": year.period_end.isoformat(),
                "metrics": {name: _fact_json(fact) for name, fact in year.metrics.items()},
            }
            for year in fact_set.fiscal_years()
        ],
    }


def _fact_json(fact: Fact) -> dict[str, Any]:
    citation = fact.citation
    return {
        "value": _number(fact.value),
        "unit": fact.unit,
        "concept": citation.concept,
        "form": citation.form,
        "accession": citation.accession,
        "filed": citation.filed.isoformat() if citation.filed else None,
        "url": citation.url,
    }


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def as_table(fact_set: CompanyFactSet) -> str:
    lines = [f"{fact_set.ticker}  {fact_set.entity}  (CIK {fact_set.cik}, {fact_set.taxonomy})"]
    years = fact_set.fiscal_years()
    if not years:
        lines.append("no fiscal-year figures")
    for year in years:
        lines.extend(
            ["", f"FY{year.fiscal_year}  {year.period_start} .. {year.period_end}", *_year_table(year)]
        )
    return "\n".join(lines)


def _year_table(year: FiscalYear) -> list[str]:
    rows = [COLUMNS, *(_row(fact) for fact in year.metrics.values())]
    widths = [max(len(row[column]) for row in rows) for column in range(len(COLUMNS))]
    numeric = COLUMNS.index("value")
    return [
        "  ".join(
            cell.rjust(width) if column == numeric else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _row(fact: Fact) -> tuple[str, ...]:
    citation = fact.citation
    concept = citation.concept or f"derived: {fact.derivation}"
    period = f"{fact.period_start}..{fact.period_end}" if fact.period_start else f"at {fact.period_end}"
    filed = citation.filed.isoformat() if citation.filed else ""
    return (
        fact.metric,
        f"{fact.value:,}",
        fact.unit,
        concept,
        citation.form or "",
        citation.accession or "",
        filed,
        period,
    )
