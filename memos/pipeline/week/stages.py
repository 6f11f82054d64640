"""The week's stage bodies. Each starts its parts through the workflows that play them (their surfaces'
``week`` parts, memos.pipeline.composition), runs them to their end through the engine (memos.pipeline.week.
parts), and records what code read of them as its step. A resumed stage finds the parts it had started and
never starts a second one for the same name."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from datetime import date

from django.contrib.auth.models import User

from agents.week.names import Candidate, choose, question
from agents.week.outputs import (
    Chosen,
    DeckOut,
    DecksOutput,
    FigureOut,
    LookOutput,
    Name,
    NamesOutput,
    ScreenOutput,
    Skipped,
)
from memos.models import ArtefactVersion, Run
from memos.pipeline import fanout
from memos.pipeline.composition import FlaggedName, FollowsUp, LooksCloser, PartRefused, Screens
from memos.pipeline.context import StageContext
from memos.pipeline.skips import skip_steps
from memos.pipeline.week import parts
from memos.pipeline.week.breadths import FOLLOW_UPS
from memos.pipeline.week.breadths import LOOKS as LOOKS_BREADTH
from memos.pipeline.week.plan import DECKS, LOOKS, NAMES, SCREEN, look_key, max_names

log = logging.getLogger(__name__)


def _owner(ctx: StageContext) -> User:
    owner: User = ctx.run.brief.owner
    return owner


def _as_of(ctx: StageContext) -> date | None:
    raw = ctx.config.get("as_of")
    return date.fromisoformat(raw) if raw else None


# --- the screen


def run_screen(ctx: StageContext) -> None:
    ctx.once(SCREEN, ScreenOutput, lambda: screen_step(ctx))


def screen_step(ctx: StageContext) -> ScreenOutput:
    found = parts.played(Screens)
    if found is None:
        return ScreenOutput(part=None, problem="no workflow of this desk screens a watchlist")
    workflow, screens = found
    run = parts.existing(ctx.run, workflow)
    if run is None:
        try:
            run = screens.start(_owner(ctx), list(ctx.run.brief.symbols), _as_of(ctx), ctx.run, False)
        except PartRefused as exc:
            return ScreenOutput(part=None, problem=f"the week's screen could not start: {exc}")
        parts.charge(ctx.run, run)
    # The week's card says where the screen is followed while it runs: on its own run page.
    ctx.progress(ctx.step(SCREEN), f"screening: run {str(run.pk)[:8]}, on its own page")
    ended = parts.run_to_end(ctx, str(run.pk))
    part = parts.read(ended)
    version = ArtefactVersion.objects.filter(pk=part.version_id).first() if part.version_id else None
    if version is None:
        return ScreenOutput(part=part, problem=f"the week's screen froze nothing: {ended.status_message}")
    try:
        screened = screens.read(version)
    except PartRefused as exc:
        return ScreenOutput(part=part, problem=str(exc))
    return ScreenOutput(
        part=part,
        as_of=screened.as_of,
        flags=screened.flags,
        flagged=[_name(name) for name in screened.names if name.flag in ("RED", "YELLOW")],
        market=screened.market,
        market_figures=[
            FigureOut(text=f.text, fact_id=f.fact_id, value=f.value) for f in screened.market_figures
        ],
    )


def _name(name: FlaggedName) -> Name:
    alpha = name.alpha_1w
    return Name(
        symbol=name.symbol,
        name=name.name,
        sector=name.sector,
        flag=name.flag,
        reason=name.reason,
        alpha_1w=FigureOut(text=alpha.text, fact_id=alpha.fact_id, value=alpha.value) if alpha else None,
    )


# --- the names


def run_names(ctx: StageContext) -> None:
    ctx.once(NAMES, NamesOutput, lambda: names_step(ctx))


def names_step(ctx: StageContext) -> NamesOutput:
    bound = max_names(ctx.config)
    screen = ctx.output(SCREEN, SCREEN, ScreenOutput)
    if screen is None or screen.as_of is None:
        return NamesOutput(bound=bound, chosen=[], skipped=[])
    by_symbol = {name.symbol: name for name in screen.flagged}
    candidates = [
        Candidate(n.symbol, n.flag, n.alpha_1w.value if n.alpha_1w else None) for n in screen.flagged
    ]
    chosen, left = choose(candidates, bound)
    looks = parts.played(LooksCloser)
    gaps = looks[1].gaps if looks is not None else (lambda symbol: ())
    return NamesOutput(
        bound=bound,
        chosen=[
            Chosen(
                name=by_symbol[c.symbol],
                rank=c.rank,
                question=question(c.symbol, c.flag, screen.as_of),
                gaps=list(gaps(c.symbol)),
            )
            for c in chosen
        ],
        skipped=[Skipped(symbol=s.symbol, reason=s.reason) for s in left],
    )


# --- the closer looks


def run_looks(ctx: StageContext) -> None:
    names = ctx.output(NAMES, NAMES, NamesOutput)
    chosen = names.chosen if names is not None else []
    bound = max_names(ctx.config)
    unused = [look_key(rank) for rank in range(len(chosen) + 1, bound + 1)]
    skip_steps(ctx, LOOKS, unused, "no further flagged name this week")
    found = parts.played(LooksCloser)
    todo: dict[str, tuple[Chosen, Future[LookOutput]]] = {}
    for pick in chosen:
        step = ctx.step(look_key(pick.rank))
        if step.status in (step.Status.DONE, step.Status.SKIPPED):
            continue
        ctx.start(step)
        todo[step.key] = (
            pick,
            fanout.start_outer(_looker(ctx, found, pick), size=len(chosen), breadth=LOOKS_BREADTH),
        )
    for key, (pick, future) in todo.items():
        step = ctx.step(key)
        try:
            ctx.finish(step, future.result())
        except Exception as exc:  # a part's failure is the part's, said on its step; the week goes on
            log.exception("week %s: the closer look at %s stopped", ctx.run_id, pick.name.symbol)
            ctx.fail_step(step, f"the closer look at {pick.name.symbol} stopped: {exc}")


def _looker(
    ctx: StageContext, found: tuple[str, LooksCloser] | None, pick: Chosen
) -> Callable[[], LookOutput]:
    return lambda: look(ctx, found, pick)


def look(ctx: StageContext, found: tuple[str, LooksCloser] | None, pick: Chosen) -> LookOutput:
    symbol = pick.name.symbol
    if found is None:
        return LookOutput(symbol=symbol, skipped="no workflow of this desk looks closer at a name")
    workflow, looks = found
    run = parts.existing(
        ctx.run, workflow, lambda r: r.brief.company is not None and r.brief.company.ticker == symbol
    )
    if run is None:
        flagged = FlaggedName(
            symbol=symbol,
            name=pick.name.name,
            sector=pick.name.sector,
            flag=pick.name.flag,
            reason=pick.name.reason,
            alpha_1w=None,
        )
        try:
            run = looks.start(_owner(ctx), flagged, pick.question, ctx.run, False)
        except PartRefused as exc:
            return LookOutput(symbol=symbol, gaps=pick.gaps, skipped=str(exc))
        names = ctx.output(NAMES, NAMES, NamesOutput)
        parts.charge(ctx.run, run, sharing=len(names.chosen) if names else 1)
    part = parts.read(parts.run_to_end(ctx, str(run.pk)))
    version = ArtefactVersion.objects.filter(pk=part.version_id).first() if part.version_id else None
    if version is None:
        return LookOutput(symbol=symbol, part=part, gaps=pick.gaps)
    read = looks.read(version)
    return LookOutput(
        symbol=symbol,
        part=part,
        recommendation=read.recommendation,
        sizing=read.sizing,
        drift=list(read.drift),
        previous=read.previous,
        gaps=list(dict.fromkeys([*pick.gaps, *read.gaps])),
    )


# --- the decks the committee follows


def _runner(ctx: StageContext, run: Run) -> Callable[[], Run]:
    return lambda: parts.run_to_end(ctx, str(run.pk))


def run_decks(ctx: StageContext) -> None:
    ctx.once(DECKS, DecksOutput, lambda: decks_step(ctx))


def decks_step(ctx: StageContext) -> DecksOutput:
    names = ctx.output(NAMES, NAMES, NamesOutput)
    symbols = [pick.name.symbol for pick in names.chosen] if names is not None else []
    if not symbols:
        return DecksOutput(decks=[], note="no name was flagged for a closer look, so no deck was refreshed")
    found = parts.played(FollowsUp)
    if found is None:
        return DecksOutput(decks=[], note="no workflow of this desk refreshes decks")
    workflow, follows = found
    started = {run.brief_id: run for run in Run.objects.filter(part_of=ctx.run, workflow=workflow)}
    if started:  # a resumed stage: the cycles it had started, never a second one
        followups = [(run.brief_id, run) for run in started.values()]
        titles = {
            run.brief_id: f"{run.brief.subject} deck: {run.brief.question}"[:200] for run in started.values()
        }
        symbol_of = {run.brief_id: run.brief.subject for run in started.values()}
        skipped: list[DeckOut] = []
    else:
        found_up = follows.start(symbols, ctx.run, False)
        followups = [(f.brief_id, f.run) for f in found_up if f.run is not None]
        titles = {f.brief_id: f.title for f in found_up}
        symbol_of = {f.brief_id: f.symbol for f in found_up}
        skipped = [
            DeckOut(symbol=f.symbol, brief_id=f.brief_id, title=f.title, skipped=f.skipped)
            for f in found_up
            if f.run is None
        ]
        for _, run in followups:
            assert run is not None
            parts.charge(ctx.run, run, sharing=len(followups))
    if not followups and not skipped:
        return DecksOutput(decks=[], note="the committee follows no deck on this week's flagged names")
    futures = {
        brief_id: fanout.start_outer(_runner(ctx, run), size=len(followups), breadth=FOLLOW_UPS)
        for brief_id, run in followups
        if run is not None
    }
    decks = []
    for brief_id, future in futures.items():
        part = parts.read(future.result())
        version = ArtefactVersion.objects.filter(pk=part.version_id).first() if part.version_id else None
        line = follows.read(version) if version is not None else ""
        decks.append(
            DeckOut(
                symbol=symbol_of[brief_id], brief_id=brief_id, title=titles[brief_id], part=part, line=line
            )
        )
    return DecksOutput(decks=decks + skipped)
