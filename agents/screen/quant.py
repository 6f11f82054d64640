"""The quant analyst (seed 002 phase 1), code only: the market's week and regime, every symbol's profile with
the quant engine's own definitions (agents.quant: a symbol's figures are what ``manage.py quant`` prints for
it on the same as-of date), and each sector's averages with their interpretation by rule.

Every number is a ``Figure`` with an id: a symbol's and the benchmark's are the quant engine's facts
(``XOM:alpha_1w:2015-08-21``), the volatility index's close is ``VIX:close:2015-08-21``, and a sector's
averages are ``sector:basic-materials:avg_alpha_1w:2015-08-21``, derived from the symbols' facts they name.
Values keep the quant engine's units: returns and alphas are plain ratios (-0.0468 is -4.68 %).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal
from statistics import mean
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.data.prices import PriceSeries
from agents.data.types import Citation
from agents.quant import QuantProfile, compute_profile, quant_facts
from agents.quant.profile import DERIVATIONS, UNITS
from agents.screen.config import Thresholds
from agents.screen.sectors import Assignment

Regime = Literal["bull", "bear", "correction", "recovery", "unknown"]
Signal = Literal["OVERSOLD", "OVERBOUGHT", "NEUTRAL"]
OVERSOLD_RSI = 30.0
STALE_DAYS = 5  # a volatility close older than this before the as-of session is not stated as its level
OVERBOUGHT_RSI = 70.0
# The profile figures a screen shows per symbol (seed 002's table), in the engine's names.
SHOWN = (
    "return_1w",
    "beta",
    "alpha_1w",
    "sma50_distance_pct",
    "sma200_distance_pct",
    "rsi14",
    "bb_position",
    "volume_ratio",
    "atr_pct",
)


class Figure(BaseModel):
    """One number owned by code: its id, value, unit, what it is, how it was computed and from what."""

    model_config = ConfigDict(frozen=True)

    fact_id: str
    value: float
    unit: str
    derivation: str
    source: str  # the price file or the facts it was derived from
    url: str = ""
    inputs: tuple[str, ...] = ()


class MarketContext(BaseModel):
    model_config = ConfigDict(frozen=True)

    as_of: date
    benchmark: str
    benchmark_return_1w: float | None
    sma50_distance_pct: float | None
    sma200_distance_pct: float | None
    volatility_index: str
    volatility_level: float | None
    regime: Regime
    regime_signal: str  # rendered by code, numbers included
    facts: dict[str, str]  # figure name -> fact id


class SymbolProfile(BaseModel):
    model_config = ConfigDict(frozen=True)

    symbol: str
    name: str
    sector: str
    sector_rule: str  # table, override, keyword or none (agents.screen.sectors)
    as_of: date
    figures: dict[str, float | None]  # SHOWN -> value (None where the data cannot support it)
    market_part: float | None  # the week's move the market explains: the return minus the alpha residual
    quant_signal: Signal
    quant_note: str  # a template filled by code
    notes: tuple[str, ...] = ()
    facts: dict[str, str]  # figure name -> fact id

    @property
    def alpha(self) -> float | None:
        return self.figures.get("alpha_1w")


class SectorGroup(BaseModel):
    model_config = ConfigDict(frozen=True)

    sector: str
    slug: str
    symbols: list[str]
    avg_return_1w: float | None
    avg_alpha_1w: float | None
    significant: bool  # |mean alpha| past the strategy's sector threshold
    interpretation: str  # by rule, with its numbers
    facts: dict[str, str]


class QuantOutput(BaseModel):
    model_config = ConfigDict(frozen=True)

    market: MarketContext
    sectors: list[SectorGroup]
    symbols: list[SymbolProfile]
    figures: list[Figure]
    problems: list[str] = []  # symbols the data could not support, and why

    def figure(self, fact_id: str) -> Figure | None:
        return next((f for f in self.figures if f.fact_id == fact_id), None)

    def symbol(self, symbol: str) -> SymbolProfile | None:
        return next((s for s in self.symbols if s.symbol == symbol), None)

    def sector(self, sector: str) -> SectorGroup | None:
        return next((s for s in self.sectors if s.sector == sector), None)


def pct(ratio: float | None, *, signed: bool = True) -> str:
    """A ratio as the dashboard shows it: -0.0468 is "-4.68%"."""
    if ratio is None:
        return "n/a"
    return f"{ratio * 100:+.2f}%" if signed else f"{ratio * 100:.2f}%"


def slug(sector: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", sector.lower()).strip("-") or "unclassified"


def _figures(profile: QuantProfile, symbol: str, citation: Citation) -> list[Figure]:
    return [
        Figure(
            fact_id=fact.fact_id,
            value=float(fact.value),
            unit=fact.unit,
            derivation=fact.derivation,
            source=citation.label,
            url=citation.url,
        )
        for fact in quant_facts(profile, ticker=symbol, citation=citation)
    ]


def price_citation(series: PriceSeries) -> Citation:
    """A bundled file's bars came from Yahoo Finance (the label names the file); a live series cites the
    URL it was read from."""
    live = series.source_label.startswith("https://")
    return Citation(
        source="prices",
        url=series.source_label if live else f"https://finance.yahoo.com/quote/{series.ticker}/history",
        label=f"daily bars, {series.source_label}",
    )


def market_context(
    benchmark: PriceSeries, volatility: PriceSeries | None, as_of: date
) -> tuple[MarketContext, list[Figure]]:
    profile = compute_profile(benchmark, benchmark=benchmark, as_of=as_of)
    figures = [f for f in _figures(profile, benchmark.ticker, price_citation(benchmark)) if _market(f)]
    facts = {f.fact_id.split(":")[1]: f.fact_id for f in figures}
    level = None
    volatility_name = volatility.ticker if volatility is not None else "VIX"
    known = volatility.until(profile.as_of) if volatility is not None else None
    if known is not None and not known.bars.empty and (profile.as_of - known.last_date).days <= STALE_DAYS:
        level = float(known.bars["close"].iloc[-1])
        fact_id = f"{known.ticker}:close:{known.last_date.isoformat()}"
        figures.append(
            Figure(
                fact_id=fact_id,
                value=level,
                unit="index",
                derivation=f"the index's close on {known.last_date}",
                source=f"daily closes, {known.source_label}",
                url="https://www.cboe.com/tradable_products/vix/vix_historical_data/",
            )
        )
        facts["close"] = fact_id
    regime, signal = _regime(benchmark.ticker, profile.sma50_distance_pct, profile.sma200_distance_pct)
    context = MarketContext(
        as_of=profile.as_of,
        benchmark=benchmark.ticker,
        benchmark_return_1w=profile.return_1w,
        sma50_distance_pct=profile.sma50_distance_pct,
        sma200_distance_pct=profile.sma200_distance_pct,
        volatility_index=volatility_name,
        volatility_level=level,
        regime=regime,
        regime_signal=signal,
        facts=facts,
    )
    return context, figures


def _market(figure: Figure) -> bool:
    """The benchmark's own figures a screen states: its week and where it stands against its averages."""
    return figure.fact_id.split(":")[1] in {"return_1w", "sma50_distance_pct", "sma200_distance_pct"}


def _regime(benchmark: str, sma50: float | None, sma200: float | None) -> tuple[Regime, str]:
    """Bull above both averages, bear below both, a correction below the 50-day only, a recovery above the
    50-day only; said with the distances."""
    if sma50 is None or sma200 is None:
        return "unknown", f"{benchmark} has too little history for its 50- and 200-day averages"
    where = (
        f"{benchmark} {abs(sma50):.1f}% {'above' if sma50 >= 0 else 'below'} its 50-day average and "
        f"{abs(sma200):.1f}% {'above' if sma200 >= 0 else 'below'} its 200-day"
    )
    regime: Regime
    if sma50 >= 0 and sma200 >= 0:
        regime = "bull"
    elif sma50 < 0 and sma200 < 0:
        regime = "bear"
    elif sma50 < 0:
        regime = "correction"
    else:
        regime = "recovery"
    return regime, where


def symbol_profile(
    series: PriceSeries,
    *,
    benchmark: PriceSeries,
    as_of: date,
    assignment: Assignment,
    name: str,
) -> tuple[SymbolProfile, list[Figure]]:
    profile = compute_profile(series, benchmark=benchmark, as_of=as_of)
    figures = [f for f in _figures(profile, series.ticker, price_citation(series)) if _shown(f)]
    values = {key: getattr(profile, key) for key in SHOWN}
    market_part = (
        profile.return_1w - profile.alpha_1w
        if profile.return_1w is not None and profile.alpha_1w is not None
        else None
    )
    signal = _signal(profile.rsi14)
    return (
        SymbolProfile(
            symbol=series.ticker,
            name=name or series.ticker,
            sector=assignment.sector,
            sector_rule=assignment.how,
            as_of=profile.as_of,
            figures=values,
            market_part=market_part,
            quant_signal=signal,
            quant_note=quant_note(profile, benchmark.ticker, signal),
            notes=profile.notes,
            facts={f.fact_id.split(":")[1]: f.fact_id for f in figures},
        ),
        figures,
    )


def _shown(figure: Figure) -> bool:
    return figure.fact_id.split(":")[1] in SHOWN


def _signal(rsi: float | None) -> Signal:
    if rsi is not None and rsi <= OVERSOLD_RSI:
        return "OVERSOLD"
    if rsi is not None and rsi >= OVERBOUGHT_RSI:
        return "OVERBOUGHT"
    return "NEUTRAL"


def quant_note(profile: QuantProfile, benchmark: str, signal: Signal) -> str:
    """Seed 002's ``quant_note`` as a template: how much of the week is the market and how much the symbol's
    own, then momentum and volume, every number from the profile."""
    parts = [decomposition(profile.ticker, profile.return_1w, profile.alpha_1w, profile.beta, benchmark)]
    if profile.rsi14 is not None:
        label = {"OVERSOLD": " (oversold)", "OVERBOUGHT": " (overbought)", "NEUTRAL": ""}[signal]
        parts.append(f"RSI14 {profile.rsi14:.1f}{label}.")
    if profile.volume_ratio is not None:
        parts.append(f"Volume {profile.volume_ratio:.1f}x its 20-day average.")
    return " ".join(parts)


def decomposition(
    symbol: str, week: float | None, alpha: float | None, beta: float | None, benchmark: str
) -> str:
    """The week split into the market's part and the symbol's own, in numbers (seed 002's alpha/beta
    clarity): "XOM moved -4.68% this week: -3.11% is the market's move (beta 0.97) and -1.57% its own"."""
    if week is None:
        return f"{symbol} has no full week of prices to this session."
    if alpha is None or beta is None:
        return (
            f"{symbol} moved {pct(week)} this week; without a beta against {benchmark}, the market's part "
            "is unknown."
        )
    return (
        f"{symbol} moved {pct(week)} this week: {pct(week - alpha)} is the market's move "
        f"(beta {beta:.2f} against {benchmark}) and {pct(alpha)} its own (the alpha residual)."
    )


def sector_groups(
    groups: Mapping[str, Sequence[str]],
    profiles: Mapping[str, SymbolProfile],
    *,
    as_of: date,
    thresholds: Thresholds,
) -> tuple[list[SectorGroup], list[Figure]]:
    found: list[SectorGroup] = []
    figures: list[Figure] = []
    for sector, symbols in groups.items():
        members = [profiles[s] for s in symbols if s in profiles]
        key = slug(sector)
        facts: dict[str, str] = {}
        averages: dict[str, float | None] = {}
        for metric in ("return_1w", "alpha_1w"):
            held = [(v, m.facts[metric]) for m in members if (v := m.figures.get(metric)) is not None]
            value = mean(v for v, _ in held) if held else None
            averages[metric] = value
            if value is None:
                continue
            fact_id = f"sector:{key}:avg_{metric}:{as_of.isoformat()}"
            facts[f"avg_{metric}"] = fact_id
            figures.append(
                Figure(
                    fact_id=fact_id,
                    value=float(Decimal(f"{value:.10g}")),
                    unit=UNITS[metric],
                    derivation=f"mean of {len(held)} symbols' {DERIVATIONS[metric].split(',')[0]} ({metric})",
                    source="the symbols' figures it names",
                    inputs=tuple(fact for _, fact in held),
                )
            )
        alpha = averages["alpha_1w"]
        significant = alpha is not None and abs(alpha) * 100 >= thresholds.sector_alpha_pct
        found.append(
            SectorGroup(
                sector=sector,
                slug=key,
                symbols=list(symbols),
                avg_return_1w=averages["return_1w"],
                avg_alpha_1w=alpha,
                significant=significant,
                interpretation=_interpretation(averages["return_1w"], alpha, significant),
                facts=facts,
            )
        )
    return found, figures


def _interpretation(week: float | None, alpha: float | None, significant: bool) -> str:
    if week is None or alpha is None:
        return "Not enough data to split the sector's move into market and specific parts."
    if not significant:
        return (
            f"Mostly beta: the market explains the sector's {pct(week)} week; "
            f"its own part averages {pct(alpha)}."
        )
    direction = "fell more" if alpha < 0 else "rose more"
    if week < 0 < alpha:
        direction = "fell less"
    elif week > 0 > alpha:
        direction = "rose less"
    return f"Significant alpha: the sector {direction} than beta explains (mean alpha residual {pct(alpha)})."


def screen_quant(
    universe: Sequence[tuple[Assignment, str, PriceSeries]],
    *,
    benchmark: PriceSeries,
    volatility: PriceSeries | None,
    as_of: date | None,
    thresholds: Thresholds,
    problems: Sequence[str] = (),
) -> QuantOutput:
    """The whole quant hand-off for a universe of (sector assignment, name, prices) as of ``as_of``
    (default: the benchmark's last session). A symbol whose prices do not reach the as-of session is left
    out with the reason in ``problems``, not guessed."""
    day = as_of or benchmark.last_date
    market, figures = market_context(benchmark, volatility, day)
    profiles: dict[str, SymbolProfile] = {}
    troubles = list(problems)
    groups: dict[str, list[str]] = {}
    for assignment, name, series in universe:
        if series.first_date > market.as_of or series.last_date < market.as_of:
            troubles.append(
                f"{series.ticker}: its prices ({series.first_date} .. {series.last_date}) do not reach "
                f"{market.as_of}"
            )
            continue
        profile, own = symbol_profile(
            series, benchmark=benchmark, as_of=market.as_of, assignment=assignment, name=name
        )
        profiles[profile.symbol] = profile
        figures.extend(own)
        groups.setdefault(assignment.sector, []).append(profile.symbol)
    ordered = dict(sorted(groups.items(), key=lambda pair: (pair[0] == "Unclassified", pair[0])))
    sectors, sector_figures = sector_groups(ordered, profiles, as_of=market.as_of, thresholds=thresholds)
    return QuantOutput(
        market=market,
        sectors=sectors,
        symbols=[profiles[s] for group in ordered.values() for s in group],
        figures=[*figures, *sector_figures],
        problems=troubles,
    )
