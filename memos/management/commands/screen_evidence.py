"""``manage.py screen_evidence [--of ID]``: a frozen screen's evidence per symbol, counted (issue 32):
how many symbols have a document of their own as this code quotes them, against what the screen quoted
before (its sector's cited documents for every symbol: how many of those named the symbol, how many were
promotion, how many named other symbols), and how many promotional posts its readings left out. Default:
the latest screen version. Measure a version frozen before and one frozen after to compare."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agents.screen.evidence import tally
from agents.screen.outputs import NewsOutput, QuantStep, ScreenResult
from memos.models import ArtefactVersion


class Command(BaseCommand):
    help = "Count a frozen screen's per-symbol evidence: its own, its sector's, promotion left out."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--of", type=int, help="the screen version's id; default: the latest")

    def handle(self, *args: Any, **options: Any) -> None:
        versions = ArtefactVersion.objects.filter(kind="screen").order_by("-created_at")
        version = versions.filter(pk=options["of"]).first() if options["of"] else versions.first()
        if version is None:
            raise CommandError("no such screen version")
        content = version.content
        result = ScreenResult.model_validate(content["result"])
        news = {sector: NewsOutput.model_validate(raw) for sector, raw in content["news"].items()}
        if content.get("overview"):
            news[""] = NewsOutput.model_validate(content["overview"])
        quant = QuantStep.model_validate(content["quant"]).quant
        counted = tally(result.assessments, news, {p.symbol: p.name for p in quant.symbols})
        self.stdout.write(
            "\n".join(
                [
                    f"screen version {version.pk}, week ending {result.as_of}: {counted.symbols} symbols",
                    f"with a document of their own, as quoted now: {counted.own}",
                    "quoting their sector's cited documents, as before issue 32: "
                    f"{counted.sector_quoted_own} with one naming them, {counted.sector_quoted_promotion} "
                    f"with promotion, {counted.sector_quoted_others} with one not naming them",
                    f"promotional posts the readings left out: {counted.left_out}",
                ]
            )
        )
