"""The managing director (seed 002), the one role that sees everything: the market, every sector's reading and
synthesis, every symbol's flag as code decided it so far. It proposes flag changes with reasons; code applies
only those the honesty protocol admits (memos.pipeline.screen.final). On another model family where one is
configured (seed 003); the run page warns when it shares the analysts'."""

from __future__ import annotations

import threading
from functools import partial

from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.screen.config import ScreenConfig
from agents.screen.display import figure_lines, value_text
from agents.screen.narrowing import director_schema
from agents.screen.outputs import (
    DirectorOutput,
    FlagChangeOut,
    OverallOutput,
    QuantStep,
    Revisit,
    SynthesisOutput,
)
from agents.screen.portfolio import Portfolio, portfolio
from agents.screen.prose import screen_shown as shown
from agents.screen.schemas import SEND_BACKS, SendBack
from agents.screen.summary import Ranked, check_list, kept_summary, market_week, strongest, weakest
from agents.screen.verdicts import decisions
from agents.text.scripts import Language
from agents.text.sentences import trim_cut
from memos.pipeline import fanout
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import language
from memos.pipeline.judge_families import badges
from memos.pipeline.prompts import template
from memos.pipeline.screen.breadths import SENT_BACK
from memos.pipeline.screen.handoffs import market_block, market_ids, synthesis_block
from memos.pipeline.screen.narratives import cited_figures, narrative
from memos.pipeline.screen.news import quant_of
from memos.pipeline.screen.plan import (
    CHARTS,
    DIRECTOR,
    DIRECTOR_STAGE,
    OVERALL,
    REVISE_KEYS,
    SYNTHESIS,
    SYNTHESIS_KIND,
    synthesis_key,
)
from memos.pipeline.screen.prepare import charts_step
from memos.pipeline.screen.synthesis import Writer, news_by_sector, overview_of
from memos.pipeline.skips import skip_steps


def first_syntheses(ctx: StageContext, screen: ScreenConfig) -> dict[str, SynthesisOutput]:
    """Each sector's synthesis as the senior analyst first wrote it (what the managing director reviews)."""
    found = ctx.outputs(SYNTHESIS, SynthesisOutput, kind=SYNTHESIS_KIND)
    return {s: found[synthesis_key(s)] for s in screen.sector_names if synthesis_key(s) in found}


def revisions(ctx: StageContext) -> dict[str, SynthesisOutput]:
    """The sectors the managing director sent back, as the senior analyst rewrote them, by sector."""
    found = ctx.outputs(DIRECTOR_STAGE, SynthesisOutput, kind=SYNTHESIS_KIND)
    return {r.sector: r for key, r in found.items() if key in REVISE_KEYS}


def syntheses_by_sector(ctx: StageContext, screen: ScreenConfig) -> dict[str, SynthesisOutput]:
    """Each sector's synthesis as it stands: rewritten where the managing director sent it back."""
    return first_syntheses(ctx, screen) | revisions(ctx)


def run_director(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    step = quant_of(ctx)
    review = ctx.once_or_failed(DIRECTOR, DirectorOutput, lambda: director_output(ctx, screen, step))
    revisits = review.revisits if review else []
    if revisits:
        # One call a sector sent back, each its own step (a resumed stage reads back those that finished),
        # one at a time: the review already spent the run's parallel calls' worth of waiting.
        gw = gateway(screen.strategy.models)
        writer = Writer(gw, ctx, step, news_by_sector(ctx, screen), screen)
        first = first_syntheses(ctx, screen)
        work = {
            key: partial(writer.revise, revisit.sector, revisit.reason, first.get(revisit.sector))
            for key, revisit in zip(REVISE_KEYS, revisits, strict=False)
        }
        ctx.fan_out(work, SynthesisOutput, limit=1, breadth=SENT_BACK)
    skip_steps(
        ctx,
        DIRECTOR_STAGE,
        list(REVISE_KEYS[len(revisits) :]),
        "not needed: the managing director sent no further sector back"
        if review is not None
        else "not run: the managing director's review did not finish",
    )


def director_output(ctx: StageContext, screen: ScreenConfig, step: QuantStep) -> DirectorOutput:
    quant = step.quant
    news = news_by_sector(ctx, screen)
    syntheses = first_syntheses(ctx, screen)
    overall = ctx.output(SYNTHESIS, OVERALL, OverallOutput)
    flags = decisions(quant, news, syntheses, screen.strategy.thresholds)
    lines = []
    for group in quant.sectors:
        reading = news.get(group.sector)
        evidence = reading.evidence_quality if reading else "none"
        lines.append(f"{group.sector}: {group.interpretation} Evidence: {evidence}.")
        for symbol in group.symbols:
            profile = quant.symbol(symbol)
            if profile is None:
                continue
            alpha_id = profile.facts.get("alpha_1w", "")
            lines.append(
                f"  {symbol} ({profile.name}): flag {flags[symbol][1].flag}, alpha [[{alpha_id}]] "
                f"({value_text('alpha_1w', profile.alpha)}), signal {profile.quant_signal}"
            )
    book = portfolio(
        quant, {symbol: decision.flag for symbol, (_, decision) in flags.items()}, stage="review"
    )
    strong, weak = strongest(quant), weakest(quant)
    overview = overview_of(ctx)
    analyses = "\n".join(
        [
            f"Market overview: {overview.summary if overview else 'not available'}",
            f"Across sectors: {overall.market_view if overall else 'not available'}",
            *(synthesis_block(sector, syntheses.get(sector)) for sector in screen.sector_names),
        ]
    )
    facts = tuple(
        market_ids(quant)
        + [p.facts["alpha_1w"] for p in quant.symbols if "alpha_1w" in p.facts]
        + [f.fact_id for f in book.figures]
    )
    symbols = tuple(p.symbol for p in quant.symbols)
    gw = gateway(screen.strategy.models)
    ctx.check()
    prompt = template("screen_director", ctx.run).render(
        {
            "as_of": str(quant.market.as_of),
            "market": market_block(quant),
            "portfolio": portfolio_block(book, strong, weak),
            "sectors": "\n".join(lines),
        },
        {"analyses": analyses},
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=DIRECTOR_STAGE, role=Role.MANAGING_DIRECTOR)
    sectors = tuple(screen.sector_names)
    schema = director_schema(symbols, facts, sectors)
    sent = threading.Event()
    asked = fanout.beside(lambda: gw.complete(prompt, schema, context=context, sent=sent))
    # The last stage's price charts read nothing of the review: drawn while its call is in flight.
    ctx.prepare_next(CHARTS, lambda: charts_step(screen, step), after=[sent])
    answer, _ = trim_cut(asked.result())
    known = frozenset(facts)
    said_in = language(ctx)
    figures = cited_figures(quant)
    texts = {
        "quality_rationale": narrative(answer.quality_rationale, known, said_in, figures),
        "executive_summary": narrative(answer.executive_summary, known, said_in, figures),
        "portfolio_note": narrative(answer.portfolio_note, known, said_in, figures),
    }
    changes = []
    dropped = [f"{name}: {text.note}" for name, text in texts.items() if text.note]
    for change in answer.flag_adjustments:
        reason = narrative(change.reason, known, said_in, figures)
        if change.symbol not in symbols:
            dropped.append(f"a flag change for {change.symbol}, not on the watchlist, left out")
        elif reason.withheld or reason.empty:
            dropped.append(f"the change of {change.symbol}: {reason.note or 'no reason left to show'}")
        else:
            changes.append(FlagChangeOut(symbol=change.symbol, to=change.to, reason=reason.text))
    blind = [narrative(line, known, said_in, figures) for line in answer.blind_spots]
    summary = kept_summary(texts["executive_summary"].text, symbols, strong, weak)
    said_notes = [texts["executive_summary"].note] if texts["executive_summary"].note else []
    named_strong = [s for s in answer.strongest_candidates if s in symbols]
    named_weak = [s for s in answer.weakest_candidates if s in symbols]
    revisits = _revisits(answer.inconsistent_sectors, sectors, known, said_in, dropped)
    return DirectorOutput(
        quality_score=answer.quality_score,
        quality_rationale=texts["quality_rationale"].text,
        flag_adjustments=changes,
        strongest_candidates=named_strong,
        weakest_candidates=named_weak,
        blind_spots=[b.text for b in blind if b.text],
        executive_summary=summary.text,
        portfolio_note=texts["portfolio_note"].text,
        same_model_warning=" ".join(badges(ctx.run.verdict_families, role=Role.MANAGING_DIRECTOR)),
        dropped=dropped,
        portfolio=book,
        strongest=strong,
        weakest=weak,
        strongest_check=check_list(named_strong, strong, "strongest", quant),
        weakest_check=check_list(named_weak, weak, "weakest", quant),
        market_week=market_week(quant),
        summary_notes=[*said_notes, *summary.notes],
        revisits=revisits,
    )


def _revisits(
    asked: list[SendBack],
    sectors: tuple[str, ...],
    known: frozenset[str],
    said_in: Language,
    dropped: list[str],
) -> list[Revisit]:
    """The sectors the director sends back, each once and with a reason a reader may see; what is left
    out is noted in ``dropped``."""
    revisits: list[Revisit] = []
    for ask in asked:
        why = shown(ask.reason, known, language=said_in)
        if ask.sector not in sectors or any(r.sector == ask.sector for r in revisits):
            dropped.append(f"a send-back of {ask.sector!r} (not a sector here, or repeated) left out")
        elif why.withheld or why.empty:
            dropped.append(f"the send-back of {ask.sector}: {why.note or 'no reason left to show'}")
        elif len(revisits) < SEND_BACKS:
            revisits.append(Revisit(sector=ask.sector, reason=why.text))
    return revisits


def portfolio_block(book: Portfolio, strong: list[Ranked], weak: list[Ranked]) -> str:
    """The portfolio as code counted it, and code's ranking of the candidates by their own move."""

    def ranked(items: list[Ranked]) -> str:
        return ", ".join(f"{r.symbol} [[{r.fact_id}]]" for r in items) or "none"

    return "\n".join(
        [
            figure_lines(book.figures),
            f"Strongest by the week's own move (code's ranking): {ranked(strong)}",
            f"Weakest by the week's own move (code's ranking): {ranked(weak)}",
        ]
    )
