"""The flags, by code (seed 002's epistemic honesty protocol): each symbol's floor from its alpha and its
sector's evidence, the senior analyst's proposal where the floor admits it, then the managing director's
changes where the floor admits them (a refused change is kept with its reason). Each assessment states, in
numbers code renders, how much of the week was the market and how much the symbol's own. Then the run's
ending and the version it freezes."""

from __future__ import annotations

from collections import Counter

from agents.screen.config import ScreenConfig
from agents.screen.criteria import measure
from agents.screen.display import LABELS, figure_text, printed
from agents.screen.flags import UNREAD, UNREAD_SUMMARY, adjust
from agents.screen.outputs import (
    AdjustmentOut,
    Assessment,
    ChartsOutput,
    DirectorOutput,
    OverallOutput,
    ScreenResult,
    SectorView,
)
from agents.screen.portfolio import portfolio
from agents.screen.quant import decomposition
from agents.screen.summary import market_week, portfolio_text
from agents.screen.verdicts import decisions, proposals
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.screen.director import revisions, syntheses_by_sector
from memos.pipeline.screen.news import quant_of
from memos.pipeline.screen.plan import (
    CHARTS,
    DIRECTOR,
    DIRECTOR_STAGE,
    FINAL,
    FLAGS,
    OVERALL,
    SYNTHESIS,
)
from memos.pipeline.screen.prepare import charts_step
from memos.pipeline.screen.synthesis import news_by_sector, overview_of
from memos.pipeline.workflows import Artefact, Ending

KIND = "screen"
DATA_CONSTRAINED = (
    "Analysis is data-constrained this week. {thin} of {sectors} sectors lack strong news evidence. Quant "
    "signals are the primary basis for recommendations."
)


def run_final(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    ctx.once(FLAGS, ScreenResult, lambda: flags(ctx, screen))
    ctx.once(CHARTS, ChartsOutput, lambda: charts(ctx, screen))


def charts(ctx: StageContext, screen: ScreenConfig) -> ChartsOutput:
    """Drawn during the managing director's call when this worker went straight on (``prepare_next``)."""
    return ctx.prepared(CHARTS, ChartsOutput) or charts_step(screen, quant_of(ctx))


def flags(ctx: StageContext, screen: ScreenConfig) -> ScreenResult:
    quant = quant_of(ctx).quant
    news = news_by_sector(ctx, screen)
    syntheses = syntheses_by_sector(ctx, screen)
    director = ctx.output(DIRECTOR_STAGE, DIRECTOR, DirectorOutput)
    decided = decisions(quant, news, syntheses, screen.strategy.thresholds)
    calls = proposals(syntheses)
    changes = {change.symbol: change for change in (director.flag_adjustments if director else [])}
    assessments = []
    for profile in quant.symbols:
        rule, decision = decided[profile.symbol]
        flag, adjustment = decision.flag, None
        change = changes.get(profile.symbol)
        if change is not None and change.to != flag:
            made = adjust(profile.symbol, flag, change.to, change.reason, rule)
            adjustment = AdjustmentOut(
                before=made.before,
                to=made.to,
                reason=made.reason,
                accepted=made.accepted,
                refusal=made.refusal,
            )
            flag = made.to if made.accepted else flag
        call = calls.get(profile.symbol)
        reading = news.get(profile.sector)
        figures = profile.figures
        assessments.append(
            Assessment(
                symbol=profile.symbol,
                name=profile.name,
                sector=profile.sector,
                flag=flag,
                proposed=decision.proposed,
                flag_reason=" ".join(part for part in (rule.rule, call.flag_reason if call else "") if part),
                split=decomposition(
                    profile.symbol,
                    figures.get("return_1w"),
                    figures.get("alpha_1w"),
                    figures.get("beta"),
                    quant.market.benchmark,
                ),
                evidence_quality=reading.evidence_quality if reading else UNREAD,
                code_note=decision.note,
                adjustment=adjustment,
                bullish_signals=call.bullish_signals if call else [],
                bearish_signals=call.bearish_signals if call else [],
                key_concern=call.key_concern if call else "",
                sources=list(reading.cited) if reading else [],
            )
        )
    sectors = [
        SectorView(
            sector=group.sector,
            interpretation=group.interpretation,
            news_summary=news[group.sector].summary if group.sector in news else UNREAD_SUMMARY,
            evidence_quality=news[group.sector].evidence_quality if group.sector in news else UNREAD,
            synthesis=syntheses[group.sector].synthesis if group.sector in syntheses else "",
            drivers=list(news[group.sector].drivers) if group.sector in news else [],
            symbols=list(group.symbols),
        )
        for group in quant.sectors
    ]
    thin = sum(1 for view in sectors if view.evidence_quality != "strong")
    counted = Counter(a.flag for a in assessments)
    # The sectors the managing director sent back and the senior analyst rewrote: one call each, added to
    # seed 002's bound (and said where the bound is shown).
    revised = list(revisions(ctx))
    bound = screen.call_bound() + len(revised)
    ledger = LLMCall.objects.filter(run_id=ctx.run.pk)
    asked = ledger.filter(outcome__in=(LLMCall.Outcome.OK, LLMCall.Outcome.CACHED)).count()
    paid = ledger.exclude(outcome=LLMCall.Outcome.CACHED).count()
    return ScreenResult(
        as_of=quant.market.as_of,
        assessments=assessments,
        sectors=sectors,
        data_note=DATA_CONSTRAINED.format(thin=thin, sectors=len(sectors))
        if thin * 2 >= len(sectors)
        else "",
        flag_counts={flag: counted.get(flag, 0) for flag in ("GREEN", "YELLOW", "RED")},
        llm_calls=asked,
        call_bound=bound,
        paid_requests=paid,
        criteria=measure(assessments, quant, news, llm_calls=asked, call_bound=bound, seed=str(ctx.run.pk)),
        portfolio=portfolio(quant, {a.symbol: a.flag for a in assessments}, stage="watchlist"),
        revised=revised,
    )


def ending(ctx: StageContext) -> Ending:
    result = ctx.output(FINAL, FLAGS, ScreenResult)
    if result is None:
        raise StageFailed("the flags did not finish")
    counts = result.flag_counts
    line = (
        f"{len(result.assessments)} symbols in {len(result.sectors)} sectors as of {result.as_of}: "
        f"{counts['GREEN']} green, {counts['YELLOW']} yellow, {counts['RED']} red; "
        f"{result.llm_calls} LLM calls (bound {result.call_bound}), {result.paid_requests} requests paid"
    )
    failed = list(
        AgentStep.objects.filter(run_id=ctx.run.pk, status=AgentStep.Status.FAILED).values_list(
            "title", flat=True
        )
    )
    if failed:
        # A role's step that did not finish (a call that timed out twice): its symbols were flagged by the
        # protocol alone, so a person looks before the committee reads it as a whole screen.
        return Ending(Run.Status.NEEDS_REVIEW, f"{line}; not finished: {', '.join(failed)}")
    return Ending(Run.Status.DONE, line)


def screen_artefact(ctx: StageContext) -> Artefact:
    screen = ScreenConfig.model_validate(ctx.config)
    result = ctx.output(FINAL, FLAGS, ScreenResult)
    if result is None:
        raise StageFailed("the flags did not finish, so there is nothing to freeze")
    step = quant_of(ctx)
    quant = step.quant
    director = ctx.output(DIRECTOR_STAGE, DIRECTOR, DirectorOutput)
    overall = ctx.output(SYNTHESIS, OVERALL, OverallOutput)
    overview = overview_of(ctx)
    news = news_by_sector(ctx, screen)
    charts = ctx.output(FINAL, CHARTS, ChartsOutput)
    market = quant.market
    figures = {f.fact_id: f for f in quant.figures}
    everything = figures | {f.fact_id: f for f in (result.portfolio.figures if result.portfolio else [])}
    market_line = "; ".join(
        f"{market.benchmark} {LABELS.get(name, name)} {figure_text(figures[ref])}"
        for name, ref in market.facts.items()
        if ref in figures
    )
    sections = {
        # Code's paragraphs first (the market's week, the portfolio), then the director's words code kept.
        "Executive summary": "\n".join(
            part
            for part in (
                printed(market_week(quant), everything),
                director.executive_summary if director else "",
                result.data_note,
                printed(portfolio_text(result.portfolio), everything) if result.portfolio else "",
                printed(director.portfolio_note, everything) if director else "",
            )
            if part
        ),
        "Market": "\n".join(
            [
                f"Regime: {market.regime} ({market.regime_signal}). {market_line}.",
                overview.summary if overview else "",
                overall.market_view if overall else "",
            ]
        ).strip(),
    }
    for view in result.sectors:
        sections[f"Sector: {view.sector}"] = "\n".join(
            [view.interpretation, f"News ({view.evidence_quality}): {view.news_summary}", view.synthesis]
        )
    sections["Flags"] = "\n".join(
        f"{a.symbol} ({a.sector}): {a.flag}. {a.split} {a.flag_reason}".strip() for a in result.assessments
    )
    cited_docs = [ref for reading in news.values() for ref in reading.cited]
    if overview is not None:
        cited_docs += overview.cited
    facts = [f.fact_id for f in quant.figures if not f.fact_id.startswith("sector:")]
    return Artefact(
        kind=KIND,
        title=f"Sector screen, week ending {result.as_of}: {len(result.assessments)} symbols"[:300],
        content={
            "strategy": screen.strategy.model_dump(mode="json"),
            "quant": step.model_dump(mode="json"),
            "news": {sector: reading.model_dump(mode="json") for sector, reading in news.items()},
            "overview": overview.model_dump(mode="json") if overview else None,
            "overall": overall.model_dump(mode="json") if overall else None,
            "director": director.model_dump(mode="json") if director else None,
            "result": result.model_dump(mode="json"),
            "charts": charts.model_dump(mode="json") if charts else None,
        },
        sections=sections,
        evaluated=director is not None,  # the managing director's review stands behind it
        score=float(director.quality_score) if director else None,
        score_label="managing director's quality, /10",
        scores={"flags": result.flag_counts, "llm_calls": result.llm_calls},
        cited=tuple(dict.fromkeys([*facts, *cited_docs])),
    )
