"""The managing director (seed 002), the one role that sees everything: the market, every sector's reading and
synthesis, every symbol's flag as code decided it so far. It proposes flag changes with reasons; code applies
only those the honesty protocol admits (memos.pipeline.screen.final). On another model family where one is
configured (seed 003); the run page warns when it shares the analysts'."""

from __future__ import annotations

from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.screen.config import ScreenConfig
from agents.screen.display import value_text
from agents.screen.narrowing import director_schema
from agents.screen.outputs import DirectorOutput, FlagChangeOut, OverallOutput, QuantStep, SynthesisOutput
from agents.screen.verdicts import decisions
from agents.text.sentences import trim_cut
from agents.text.shown import shown
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway, llm_settings, with_models
from memos.pipeline.language import brief_language
from memos.pipeline.prompts import template
from memos.pipeline.screen.handoffs import market_block, market_ids, synthesis_block
from memos.pipeline.screen.news import quant_of
from memos.pipeline.screen.plan import (
    DIRECTOR,
    DIRECTOR_STAGE,
    OVERALL,
    SYNTHESIS,
    SYNTHESIS_KIND,
    synthesis_key,
)
from memos.pipeline.screen.profiles import shared_reviewer
from memos.pipeline.screen.synthesis import news_by_sector, overview_of


def syntheses_by_sector(ctx: StageContext, screen: ScreenConfig) -> dict[str, SynthesisOutput]:
    found = ctx.outputs(SYNTHESIS, SynthesisOutput, kind=SYNTHESIS_KIND)
    return {s: found[synthesis_key(s)] for s in screen.sector_names if synthesis_key(s) in found}


def run_director(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    ctx.once(DIRECTOR, DirectorOutput, lambda: director_output(ctx, screen, quant_of(ctx)))


def director_output(ctx: StageContext, screen: ScreenConfig, step: QuantStep) -> DirectorOutput:
    quant = step.quant
    news = news_by_sector(ctx, screen)
    syntheses = syntheses_by_sector(ctx, screen)
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
    overview = overview_of(ctx)
    analyses = "\n".join(
        [
            f"Market overview: {overview.summary if overview else 'not available'}",
            f"Across sectors: {overall.market_view if overall else 'not available'}",
            *(synthesis_block(sector, syntheses.get(sector)) for sector in screen.sector_names),
        ]
    )
    facts = tuple(market_ids(quant) + [p.facts["alpha_1w"] for p in quant.symbols if "alpha_1w" in p.facts])
    symbols = tuple(p.symbol for p in quant.symbols)
    gw = gateway(screen.strategy.models)
    ctx.check()
    prompt = template("screen_director", ctx.run).render(
        {"as_of": str(quant.market.as_of), "market": market_block(quant), "sectors": "\n".join(lines)},
        {"analyses": analyses},
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=DIRECTOR_STAGE, role=Role.MANAGING_DIRECTOR)
    answer, _ = trim_cut(gw.complete(prompt, director_schema(symbols, facts), context=context))
    known = frozenset(facts)
    said_in = brief_language(ctx.run.brief)
    texts = {
        "quality_rationale": shown(answer.quality_rationale, known, language=said_in),
        "executive_summary": shown(answer.executive_summary, known, language=said_in),
        "portfolio_note": shown(answer.portfolio_note, known, language=said_in),
    }
    changes = []
    dropped = [f"{name}: {text.note}" for name, text in texts.items() if text.note]
    for change in answer.flag_adjustments:
        reason = shown(change.reason, known, language=said_in)
        if change.symbol not in symbols:
            dropped.append(f"a flag change for {change.symbol}, not on the watchlist, left out")
        elif reason.withheld or reason.empty:
            dropped.append(f"the change of {change.symbol}: {reason.note or 'no reason left to show'}")
        else:
            changes.append(FlagChangeOut(symbol=change.symbol, to=change.to, reason=reason.text))
    blind = [shown(line, known, language=said_in) for line in answer.blind_spots]
    return DirectorOutput(
        quality_score=answer.quality_score,
        quality_rationale=texts["quality_rationale"].text,
        flag_adjustments=changes,
        strongest_candidates=[s for s in answer.strongest_candidates if s in symbols],
        weakest_candidates=[s for s in answer.weakest_candidates if s in symbols],
        blind_spots=[b.text for b in blind if b.text],
        executive_summary=texts["executive_summary"].text or "(the summary typed figures; code withheld it)",
        portfolio_note=texts["portfolio_note"].text,
        same_model_warning=shared_reviewer(with_models(llm_settings(), screen.strategy.models)),
        dropped=dropped,
    )
