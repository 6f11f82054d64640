"""The screen's part in the desk's week (memos.pipeline.composition.Screens): the latest week the desk's data
holds, the week's screen started on it, and a frozen screen read as the flags the week acts on."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.contrib.auth.models import User
from pydantic import ValidationError

from agents.screen.display import figure_text, printed
from agents.screen.outputs import QuantStep, ScreenResult
from agents.screen.summary import market_week
from memos.models import ArtefactVersion, Run
from memos.pipeline.composition import Figure, FlaggedName, PartRefused, ScreenedWeek, Screens
from memos.pipeline.screen import universe
from memos.pipeline.screen.desk.schedule import QUESTION
from memos.pipeline.screen.plan import NAME as SCREEN
from memos.pipeline.screen.profiles import WEEKLY
from memos.pipeline.screen.weeks import latest_week, this_weeks_strategy
from memos.pipeline.workflows import ConfigurationError
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist


def start_screen(owner: User, symbols: Sequence[str], as_of: date | None, week: Run, enqueue: bool) -> Run:
    """The week's screen of ``symbols`` (the strategy's watchlist when none), for the week, as a part of the
    week's run; on the desk's own watchlist it is the scheduled screen's line (the same brief), so each
    week's screen is the next version of it."""
    try:
        strategy = this_weeks_strategy(as_of, symbols)
        return ask_watchlist(
            owner=owner,
            symbols=list(symbols) or universe.default_symbols(strategy),
            question=QUESTION,
            workflow=SCREEN,
            profile=WEEKLY,
            options={"strategy": strategy.model_dump(mode="json")},
            enqueue=enqueue,
            scheduled=True,
            part_of=week,
        )
    except (ConfigurationError, ServiceError) as exc:
        raise PartRefused(str(exc)) from exc


def read_screen(version: ArtefactVersion) -> ScreenedWeek:
    """A frozen screen's flags, each name's own move (alpha) with its fact, and the market's week in code's
    words."""
    try:
        result = ScreenResult.model_validate(version.content["result"])
        quant = QuantStep.model_validate(version.content["quant"]).quant
    except (KeyError, TypeError, ValidationError) as exc:
        raise PartRefused(f"{version.label} is not a screen this desk can read: {exc}") from exc
    figures = {figure.fact_id: figure for figure in quant.figures}

    def alpha_of(symbol: str) -> Figure | None:
        profile = quant.symbol(symbol)
        fact_id = profile.facts.get("alpha_1w") if profile is not None else None
        found = figures.get(fact_id) if fact_id else None
        if found is None:
            return None
        return Figure(figure_text(found), found.fact_id, found.value)

    names = tuple(
        FlaggedName(
            symbol=assessment.symbol,
            name=assessment.name,
            sector=assessment.sector,
            flag=str(assessment.flag),
            reason=assessment.flag_reason,
            alpha_1w=alpha_of(assessment.symbol),
        )
        for assessment in result.assessments
    )
    market = [figures[ref] for ref in quant.market.facts.values() if ref in figures]
    return ScreenedWeek(
        as_of=result.as_of,
        flags=dict(result.flag_counts),
        names=names,
        market=printed(market_week(quant), figures),
        market_figures=tuple(Figure(figure_text(f), f.fact_id, f.value) for f in market),
    )


def latest_for(symbols: Sequence[str]) -> date | None:
    try:
        return latest_week(None, symbols)
    except ConfigurationError as exc:
        raise PartRefused(str(exc)) from exc


WEEK_PART = Screens(latest_week=latest_for, start=start_screen, read=read_screen)
