"""``manage.py deck_check FILE.pptx|FILE.pdf [--json]``: T5, every figure a rendered deck prints, checked
against the fact store.

Prints one row per figure (slide, the figure as printed, the fact it cites, what the store says it must
read, the status) and a one-line verdict, or with ``--json`` the report as ``{"ok", "figures"}``.
Exit status 0 when every figure is ok, 1 when any is not, 2 on bad input (a missing file, one that is not
a PPTX or PDF, one without an embedded deck.json, one larger than any deck: more bytes, unzipped bytes,
parts or pages than agents.deck.factcheck.extract allows, refused before it is read or unzipped): one line
on stderr, nothing on stdout.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from agents.deck.factcheck.check import FactCheckReport
from agents.deck.factcheck.extract import MAX_FILE_BYTES, UnreadableFile, refuse_file_size
from agents.deck.render.embedded import NoEmbeddedDeck
from memos.pipeline.deck.desk import factcheck

COLUMNS = ("slide", "text", "fact", "expected", "status")
NOT_PRINTED = "(not printed)"


class Command(BaseCommand):
    help = "Check every figure of a rendered deck (PPTX or PDF) against the fact store."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="a deck rendered by the desk: .pptx or .pdf")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            report = factcheck.check_file(_read(path))
        except (OSError, NoEmbeddedDeck, UnreadableFile) as exc:
            # One line whatever the message holds (pydantic's validation errors carry newlines).
            self.stderr.write(f"deck_check: {path}: " + " ".join(str(exc).split()))
            raise SystemExit(2) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.model_dump(mode="json"), indent=2))
        else:
            self.stdout.write(as_table(report))
            self.stdout.write(verdict(report))
        if not report.ok:
            raise SystemExit(1)


def _read(path: Path) -> bytes:
    if not path.exists():
        raise FileNotFoundError("no such file")
    if not path.is_file():
        raise IsADirectoryError("not a file")
    refuse_file_size(path.stat().st_size)
    with path.open("rb") as file:
        # A file that grew since: one byte past the cap is enough for the check to refuse it.
        return file.read(MAX_FILE_BYTES + 1)


def as_table(report: FactCheckReport) -> str:
    rows = [COLUMNS] + [
        (
            str(row.slide),
            row.text or NOT_PRINTED,
            _shown(row.fact_id or "-"),
            row.expected or "-",
            row.status,
        )
        for row in report.figures
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def verdict(report: FactCheckReport) -> str:
    total = len(report.figures)
    if report.ok:
        return f"ok: all {total} figures match the fact store"
    counts = Counter(row.status for row in report.problems())
    kinds = ", ".join(f"{counts[status]} {status}" for status in ("mismatch", "unresolved") if counts[status])
    return f"FAILED: {len(report.problems())} of {total} figures do not match the fact store ({kinds})"


def _shown(text: str) -> str:
    """A fact id from the file as the terminal can show it: the deck is untrusted, so a control character
    or a lone surrogate in it is written as its escape, never sent to the terminal as it is."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)
