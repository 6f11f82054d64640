"""Seed 002's phase 1 and the quant analyst, code only: every symbol's prices read, its profile computed with
the quant engine's definitions, the market's week and regime, the sectors' averages; the figures stored as
facts (a symbol's and the benchmark's under the quant engine's ids), so every number the screen shows
resolves to a row with its source."""

from __future__ import annotations

import time
from decimal import Decimal

from agents.data.errors import DataError
from agents.data.prices import PriceSeries
from agents.data.types import Citation, Fact
from agents.llm.roles import Role
from agents.screen.chart import price_chart
from agents.screen.config import ScreenConfig
from agents.screen.outputs import ChartsOutput, QuantStep
from agents.screen.quant import Figure, screen_quant
from agents.screen.sectors import Assignment
from memos.models import Company
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.fact_store import fact_rows, save_fact_rows
from memos.pipeline.judge_families import badges
from memos.pipeline.screen import universe
from memos.pipeline.screen.plan import QUANT


def run_prepare(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    prices = Prices(screen)
    # Seed 003: the managing director's family as the run recorded it when it started.
    warning = " ".join(badges(ctx.run.verdict_families, role=Role.MANAGING_DIRECTOR))
    ctx.once(QUANT, QuantStep, lambda: quant_step(screen, prices, warning))


class Prices:
    """The run's price series, each file read once for both of the stage's steps."""

    def __init__(self, screen: ScreenConfig) -> None:
        self.source = universe.prices(screen.strategy)
        self._read: dict[str, PriceSeries] = {}

    def series(self, symbol: str) -> PriceSeries:
        if symbol not in self._read:
            self._read[symbol] = self.source.series(symbol)
        return self._read[symbol]


def charts_step(screen: ScreenConfig, step: QuantStep) -> ChartsOutput:
    """Every symbol's price chart: read by the frozen version alone, so drawn while the managing director's
    call is in flight and stored by the last stage (memos.pipeline.screen.director, .final), off the run's
    path (88 charts: 40 ms to draw, 550 KB to store)."""
    prices = Prices(screen)
    benchmark = prices.series(step.quant.market.benchmark)
    as_of = step.quant.market.as_of
    return ChartsOutput(
        charts={p.symbol: price_chart(prices.series(p.symbol), benchmark, as_of) for p in step.quant.symbols}
    )


def quant_step(screen: ScreenConfig, prices: Prices, warning: str) -> QuantStep:
    started = time.perf_counter()
    strategy, resolved = screen.strategy, screen.universe
    problems: list[str] = []
    try:
        benchmark = prices.series(strategy.benchmark)
    except DataError as exc:
        raise StageFailed(f"the benchmark {strategy.benchmark} cannot be read: {exc}") from exc
    volatility: PriceSeries | None = None
    try:
        volatility = prices.series(strategy.volatility_index)
    except DataError as exc:
        problems.append(f"{strategy.volatility_index}: {exc}; the regime is stated without it")
    items = []
    for symbol in resolved.symbols:
        try:
            series = prices.series(symbol)
        except DataError as exc:
            problems.append(f"{symbol}: {exc}")
            continue
        assignment = Assignment(symbol, resolved.sectors[symbol], resolved.rules[symbol])
        items.append((assignment, resolved.names[symbol], series))
    try:
        quant = screen_quant(
            items,
            benchmark=benchmark,
            volatility=volatility,
            as_of=strategy.as_of,
            thresholds=strategy.thresholds,
            problems=problems,
        )
    except DataError as exc:
        raise StageFailed(f"the screen cannot be computed as of {strategy.as_of}: {exc}") from exc
    if not quant.symbols:
        raise StageFailed(f"no symbol on the watchlist has prices up to {quant.market.as_of}")
    seconds = time.perf_counter() - started
    _store(quant.figures, resolved.names)
    return QuantStep(
        universe=resolved,
        quant=quant,
        seconds=round(seconds, 3),
        same_model_warning=warning,
    )


def _store(figures: list[Figure], names: dict[str, str]) -> None:
    """The symbols' and the market's figures as facts, under a company row each (sector averages are
    derivations over those facts, kept with the run's output)."""
    by_ticker: dict[str, list[Fact]] = {}
    for figure in figures:
        ticker, metric, day = figure.fact_id.rsplit(":", 2)
        if ticker.startswith("sector:"):
            continue
        by_ticker.setdefault(ticker, []).append(
            Fact(
                fact_id=figure.fact_id,
                ticker=ticker,
                metric=metric,
                value=Decimal(repr(figure.value)),
                unit=figure.unit,
                period_end=day,
                fiscal_period="DAY",
                citation=Citation(
                    source="prices", url=figure.url or "https://finance.yahoo.com/", label=figure.source
                ),
                derivation=figure.derivation,
            )
        )
    # A handful of statements for the whole watchlist, not two or three a symbol: 87 symbols' writes took
    # 0.6 s of the screen's run one company at a time.
    # Only the companies missing are created: a write that changes nothing still moves the store's version.
    companies = {c.ticker: c for c in Company.objects.filter(ticker__in=list(by_ticker))}
    new = [Company(ticker=t, name=names.get(t, t)) for t in by_ticker if t not in companies]
    if new:
        Company.objects.bulk_create(new, ignore_conflicts=True)
        companies = {c.ticker: c for c in Company.objects.filter(ticker__in=list(by_ticker))}
    rows = [fact_rows(company=companies[ticker], facts=facts) for ticker, facts in by_ticker.items()]
    save_fact_rows([row for company_rows in rows for row in company_rows])
