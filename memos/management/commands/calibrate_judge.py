"""``manage.py calibrate_judge [--rubric deck_r2]``: seed 001 section 2's check of the deck judge against
people's gold scores, stored as a Calibration of the active rubric version and the configured scorer model.

Prints one line per dimension of the rubric's composite (the share of examples within one point, the mean
of judge minus person, the correlation) and a verdict line. Exit status 0 when the judge passed, 1 when it
did not, 2 on bad input (an unknown rubric, no gold scores): one line on stderr, nothing on stdout.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from agents.deck.rubrics import DECK_R2
from memos.models import Calibration
from memos.pipeline.deck.desk import calibration


class Command(BaseCommand):
    help = "Score every gold example with the deck judge and compare it with the people's scores."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--rubric", default=DECK_R2, help="deck_r2 (default) or deck_r1")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = calibration.calibrate(rubric_name=options["rubric"])
        except calibration.CalibrationError as exc:
            self.stderr.write(f"calibrate_judge: {exc}")
            raise SystemExit(2) from exc
        for line in report_lines(result):
            self.stdout.write(line)
        if not result.passed:
            raise SystemExit(1)


def report_lines(result: Calibration) -> list[str]:
    lines = [f"{key}: {calibration.agreement_text(found)}" for key, found in result.by_dimension.items()]
    verdict = "PASSED" if result.passed else "NOT PASSED"
    why = (
        f"needs {calibration.WITHIN_ONE_BAR:.0%} within +-1 over at least {calibration.MIN_DECKS} decks "
        f"scored by at least {calibration.MIN_RATERS} people"
    )
    skipped = f", {result.skipped} skipped (no R2 or no scope to show the judge)" if result.skipped else ""
    lines.append(
        f"{verdict}: {result.rubric_version.name} v{result.rubric_version.version} on {result.scorer_model}, "
        f"{calibration.agreement_text(calibration.overall_of(result))} over {result.examples} examples "
        f"({result.decks} decks, {result.raters} people){skipped} ({why})"
    )
    return lines
