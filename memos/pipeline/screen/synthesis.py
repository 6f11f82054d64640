"""The senior analyst (seed 002): one synthesis per sector, in parallel, then one across sectors. It never
searches and never computes: its prompts hold only the quant analyst's and the news analyst's hand-offs.
Code keeps each symbol's proposal only for a symbol of the sector, withholds typed figures, and decides
nothing here: flags are code's, later (agents.screen.verdicts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.screen.config import ScreenConfig
from agents.screen.narrowing import overall_schema, synthesis_schema
from agents.screen.outputs import NewsOutput, OverallOutput, QuantStep, SymbolCallOut, SynthesisOutput
from agents.screen.overclaims import Evidence, overclaim, within_evidence
from agents.screen.verdicts import put_to_senior
from agents.text.figure_claims import CitedFigure
from agents.text.scripts import Language
from agents.text.sentences import trim_cut
from agents.text.shown import Shown
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import language
from memos.pipeline.prompts import template
from memos.pipeline.screen.breadths import SECTOR_REPORTS
from memos.pipeline.screen.handoffs import (
    SENIOR_FIGURES,
    market_block,
    market_ids,
    news_block,
    sector_block,
    sector_ids,
    synthesis_block,
)
from memos.pipeline.screen.narratives import cited_figures, narrative
from memos.pipeline.screen.news import quant_of
from memos.pipeline.screen.plan import NEWS, OVERALL, OVERVIEW, SYNTHESIS, news_key, synthesis_key


def news_by_sector(ctx: StageContext, screen: ScreenConfig) -> dict[str, NewsOutput]:
    """Each sector's news reading that finished, by sector name."""
    found = ctx.outputs(NEWS, NewsOutput)
    return {s: found[news_key(s)] for s in screen.sector_names if news_key(s) in found}


def overview_of(ctx: StageContext) -> NewsOutput | None:
    return ctx.output(NEWS, OVERVIEW, NewsOutput)


def run_synthesis(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    gw = gateway(screen.strategy.models)
    writer = Writer(gw, ctx, quant_of(ctx), news_by_sector(ctx, screen), screen)
    work: dict[str, Callable[[], SynthesisOutput]] = {
        synthesis_key(sector): partial(writer.sector, sector) for sector in screen.sector_names
    }
    done = ctx.fan_out(work, SynthesisOutput, limit=gw.settings.max_concurrency, breadth=SECTOR_REPORTS)
    ctx.once_or_failed(OVERALL, OverallOutput, lambda: writer.overall(overview_of(ctx), done))


@dataclass(frozen=True)
class Writer:
    gw: LLMGateway
    ctx: StageContext
    step: QuantStep
    news: Mapping[str, NewsOutput]
    screen: ScreenConfig
    # Every figure of the screen as a claim's reading wants it, read once for every sector's prose and the
    # overall view (1,200 figures: read again for each, 9 ms a sector on the stage's shared interpreter).
    figures: Mapping[str, CitedFigure] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "figures", cited_figures(self.step.quant))

    def sector(self, sector: str) -> SynthesisOutput:
        return self._sector(sector, None, None)

    def revise(self, sector: str, reason: str, first: SynthesisOutput | None) -> SynthesisOutput:
        """The sector written again, once, after the managing director found it inconsistent: the same
        hand-offs, with the first synthesis and the director's reason (both model text, fenced)."""
        return self._sector(sector, reason, first)

    def _sector(self, sector: str, sent_back: str | None, first: SynthesisOutput | None) -> SynthesisOutput:
        quant = self.step.quant
        group = quant.sector(sector)
        if group is None:
            return SynthesisOutput(
                sector=sector,
                synthesis="No symbol of this sector has prices up to the as-of session.",
                drop_type="unclear",
                confidence="low",
                calls=[],
            )
        profiles = [p for p in (quant.symbol(s) for s in group.symbols) if p is not None]
        facts = tuple(sector_ids(profiles, SENIOR_FIGURES))
        strategy = self.screen.strategy
        symbols = put_to_senior(
            profiles, self.news.get(sector), strategy.thresholds, strategy.proposals_per_sector
        )
        self.ctx.check()
        trusted = {
            "sector": sector,
            "as_of": str(quant.market.as_of),
            "quant": sector_block(quant, group, profiles, SENIOR_FIGURES),
            "assess": asked_line(symbols, len(profiles)),
        }
        reading = self.news.get(sector)
        untrusted = {"news": news_block(reading)}
        name = "screen_senior_sector"
        if sent_back is not None:
            name = "screen_senior_revise"
            untrusted |= {"first": synthesis_block(sector, first), "review": sent_back}
        prompt = template(name, self.ctx.run).render(trusted, untrusted, nonce=self.ctx.run.nonce)
        context = CallContext(run_id=self.ctx.run_id, stage=SYNTHESIS, role=Role.SENIOR_ANALYST)
        answer, _ = trim_cut(self.gw.complete(prompt, synthesis_schema(symbols, facts), context=context))
        known = frozenset(facts)
        said_in = language(self.ctx)
        figures = self.figures
        dropped: list[str] = []
        calls: dict[str, SymbolCallOut] = {}
        for call in answer.symbols:
            if call.symbol not in symbols or call.symbol in calls:
                why = "repeated" if call.symbol in calls else f"not in {sector}"
                dropped.append(f"a proposal for {call.symbol} ({why}) left out")
                continue
            found = evidence_for(reading, call.symbol)
            shown = [narrative(t, known, said_in, figures) for t in (call.flag_reason, call.key_concern)]
            reason, concern = (within_evidence(t.text, found) for t in shown)
            dropped += [f"{call.symbol}: {t.note}" for t in shown if t.note]
            dropped += [f"{call.symbol}: {note}" for t in (reason, concern) for note in t.withheld]
            calls[call.symbol] = SymbolCallOut(
                symbol=call.symbol,
                proposed=call.flag,
                flag_reason=reason.text,
                bullish_signals=_kept(call.bullish_signals, known, said_in, figures, found),
                bearish_signals=_kept(call.bearish_signals, known, said_in, figures, found),
                key_concern=concern.text,
            )
        missing = [s for s in symbols if s not in calls]
        if missing:
            dropped.append(
                f"no proposal for {', '.join(missing)}: code decides their flags from the protocol"
            )
        synthesis = narrative(answer.synthesis, known, said_in, figures)
        told = within_evidence(synthesis.text, evidence_for(reading, None))
        dropped += told.withheld
        return SynthesisOutput(
            sector=sector,
            synthesis=told.text
            or (
                "(the synthesis claimed more evidence than code found; code withheld it)"
                if told.withheld
                else "(the synthesis typed figures; code withheld it)"
            ),
            drop_type=answer.drop_type,
            confidence=answer.confidence,
            calls=[calls[s] for s in symbols if s in calls],
            dropped=[*dropped, *([synthesis.note] if synthesis.note else [])],
            asked=list(symbols),
        )

    def overall(self, overview: NewsOutput | None, syntheses: Mapping[str, SynthesisOutput]) -> OverallOutput:
        quant = self.step.quant
        facts = tuple(market_ids(quant))
        sectors = "\n".join(f"- {g.sector}: {g.interpretation}" for g in quant.sectors)
        written = "\n".join(
            [
                f"Market overview: {overview.summary if overview else 'not available'}",
                *(synthesis_block(s.sector, s) for s in syntheses.values()),
            ]
        )
        self.ctx.check()
        prompt = template("screen_senior_overall", self.ctx.run).render(
            {"as_of": str(quant.market.as_of), "market": market_block(quant), "sectors": sectors},
            {"syntheses": written},
            nonce=self.ctx.run.nonce,
        )
        context = CallContext(run_id=self.ctx.run_id, stage=SYNTHESIS, role=Role.SENIOR_ANALYST)
        answer, _ = trim_cut(self.gw.complete(prompt, overall_schema(facts), context=context))
        known = frozenset(facts)
        said_in = language(self.ctx)
        figures = self.figures
        view = narrative(answer.market_view, known, said_in, figures)
        themes = [narrative(theme, known, said_in, figures) for theme in answer.themes]
        return OverallOutput(
            market_view=view.text or "(the view typed figures; code withheld it)",
            themes=[t.text for t in themes if t.text],
            dropped=[t.note for t in (view, *themes) if t.note],
        )


def asked_line(symbols: tuple[str, ...], of: int) -> str:
    """The prompt's line naming the symbols to propose flags for (code flags the others by the protocol)."""
    if not symbols:
        return f'The protocol settles the flag of every one of the {of} symbols: leave "symbols" empty ([]).'
    settled = of - len(symbols)
    rest = f"; code flags the other {settled} by the protocol" if settled else ""
    return f"Propose a flag for these {len(symbols)} only, in this order: {', '.join(symbols)}{rest}."


def evidence_for(reading: NewsOutput | None, symbol: str | None) -> Evidence:
    """What code knows of the news behind ``symbol`` (None: the sector as a whole): its sector's grade and
    the kinds of driver found that touch it (a driver naming no symbol touches every one)."""
    if reading is None:
        return Evidence("unread", transient=False, structural=False)
    touching = [
        d for d in reading.drivers if symbol is None or not d.affected_symbols or symbol in d.affected_symbols
    ]
    return Evidence(
        reading.evidence_quality,
        transient=any(d.type == "transient" for d in touching),
        structural=any(d.type == "structural" for d in touching),
    )


def _kept(
    lines: list[str],
    known: frozenset[str],
    said_in: Language,
    figures: Mapping[str, CitedFigure],
    evidence: Evidence,
) -> list[str]:
    texts: list[Shown] = [narrative(line, known, said_in, figures) for line in lines]
    return [t.text for t in texts if t.text and not t.withheld and not overclaim(t.text, evidence)]
