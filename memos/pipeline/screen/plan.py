"""The screen's stages and steps (seed 002's phases): their names (the only place they are written), titles
and kinds. Prepare is the quant analyst, code only; the news analyst reads the market, then each sector, in
parallel; the senior analyst synthesises each sector in parallel, then the whole; the managing director
reviews everything; code decides the flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.screen.config import ScreenConfig
from agents.screen.quant import slug
from agents.screen.schemas import SEND_BACKS
from memos.pipeline.workflows import PlannedStep

# The workflow's name: stored in Run.workflow, and the kind of the versions its runs freeze.
NAME = "screen"

PREPARE = "prepare"
NEWS = "news"
SYNTHESIS = "synthesis"
DIRECTOR_STAGE = "director"
FINAL = "final"

# Step kinds (and the keys of the steps there is one of).
QUANT = "quant"
CHARTS = "charts"
NEWS_KIND = "news"
SYNTHESIS_KIND = "synthesis"
OVERALL = "overall"
DIRECTOR = "director"
FLAGS = "flags"

OVERVIEW = "overview"


def news_key(sector: str) -> str:
    return f"news-{slug(sector)}"


def synthesis_key(sector: str) -> str:
    return f"senior-{slug(sector)}"


def revise_key(index: int) -> str:
    """The ``index``th (from 1) sector the managing director may send back to the senior analyst."""
    return f"revise-{index}"


REVISE_KEYS = tuple(revise_key(i) for i in range(1, SEND_BACKS + 1))


def plan(config: Mapping[str, Any]) -> list[PlannedStep]:
    screen = ScreenConfig.model_validate(config)
    sectors = screen.sector_names
    planned = [
        PlannedStep(PREPARE, QUANT, QUANT, "Quant analyst (code): market, profiles, sectors"),
    ]
    planned += [PlannedStep(NEWS, OVERVIEW, NEWS_KIND, "News analyst: the market overview", "news_analyst")]
    planned += [
        PlannedStep(NEWS, news_key(sector), NEWS_KIND, f"News analyst: {sector}", "news_analyst", index)
        for index, sector in enumerate(sectors, start=1)
    ]
    planned += [
        PlannedStep(
            SYNTHESIS, synthesis_key(sector), SYNTHESIS_KIND, f"Senior analyst: {sector}", "senior_analyst", i
        )
        for i, sector in enumerate(sectors)
    ]
    planned += [
        PlannedStep(
            SYNTHESIS, OVERALL, OVERALL, "Senior analyst: across sectors", "senior_analyst", len(sectors)
        )
    ]
    planned += [
        PlannedStep(DIRECTOR_STAGE, DIRECTOR, DIRECTOR, "Managing director: review", "managing_director")
    ]
    # The seed's stretch: a sector the review finds inconsistent goes back to the senior analyst once. Its
    # steps are planned (skipped when the director sends none back); the run's bound rises by those used.
    planned += [
        PlannedStep(
            DIRECTOR_STAGE,
            key,
            SYNTHESIS_KIND,
            f"Senior analyst: a sector the managing director sent back ({index} of {SEND_BACKS} at most)",
            "senior_analyst",
            index,
        )
        for index, key in enumerate(REVISE_KEYS, start=1)
    ]
    planned += [
        PlannedStep(FINAL, FLAGS, FLAGS, "Flags (code, under the honesty protocol)"),
        PlannedStep(FINAL, CHARTS, CHARTS, "Price charts (code)", "", 1),
    ]
    return planned
