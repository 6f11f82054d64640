"""A stock's quant profile as of one session (seed 002 phase 1), computed only from bars up to that session.

Returns, beta and alpha use the adjusted close (dividends and splits do not look like price moves);
technical indicators use the unadjusted OHLC, as a chart shows them. Beta is the covariance of daily simple
returns with the benchmark's over the last 252 aligned sessions (dates both series traded) divided by the
benchmark's variance (both with ddof=1); the 1-week alpha residual is the stock's 5-session return minus
beta times the benchmark's over the same sessions. Both need the benchmark's bar on the as-of session.
Annualised volatility uses the same daily simple returns (not log returns), so it is on beta's footing.

With less history than a figure needs, the figure is None and ``notes`` says why; beta and volatility are
stated from 60 returns up (the 100-session recent files have 99) with a note when under 252.
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from agents.data.errors import OutOfRange
from agents.data.prices import PriceSeries
from agents.quant import indicators

SESSIONS = {"return_1w": 5, "return_1m": 21, "return_3m": 63}
BETA_SESSIONS = 252
MIN_BETA_SESSIONS = 60  # fewer aligned returns than this give a beta too noisy to state
VOLATILITY_SESSIONS = 252
TRADING_DAYS_PER_YEAR = 252
SMA_WINDOWS = {"sma50_distance_pct": 50, "sma200_distance_pct": 200}
# Sessions of bars each single-series figure needs at the least (returns need one more bar than changes).
NEEDS: dict[str, int] = {
    **{key: sessions + 1 for key, sessions in SESSIONS.items()},
    **SMA_WINDOWS,
    "rsi14": indicators.RSI_WINDOW + 1,
    "bb_position": indicators.BOLLINGER_WINDOW,
    "volume_ratio": indicators.VOLUME_LONG,
    "atr_pct": indicators.ATR_WINDOW,
    "volatility_annualised": MIN_BETA_SESSIONS + 1,
}

# The unit each key is stored with as a fact: "pure" is a plain ratio (0.0123 is 1.23 %).
UNITS: dict[str, str] = {
    "return_1w": "pure",
    "return_1m": "pure",
    "return_3m": "pure",
    "return_ytd": "pure",
    "beta": "pure",
    "alpha_1w": "pure",
    "beta_sector": "pure",
    "alpha_1w_sector": "pure",
    "sma50_distance_pct": "percent",
    "sma200_distance_pct": "percent",
    "rsi14": "index",
    "bb_position": "pure",
    "volume_ratio": "pure",
    "atr_pct": "percent",
    "volatility_annualised": "pure",
}

DERIVATIONS: dict[str, str] = {
    "return_1w": "adjusted close over the adjusted close 5 sessions earlier, minus 1",
    "return_1m": "adjusted close over the adjusted close 21 sessions earlier, minus 1",
    "return_3m": "adjusted close over the adjusted close 63 sessions earlier, minus 1",
    "return_ytd": "adjusted close over the last adjusted close of the previous calendar year, minus 1",
    "beta": "cov(daily returns, benchmark daily returns) / var(benchmark), last 252 aligned sessions",
    "alpha_1w": "1-week return minus beta times the benchmark's 1-week return",
    "beta_sector": "cov(daily returns, sector daily returns) / var(sector), last 252 aligned sessions",
    "alpha_1w_sector": "1-week return minus sector beta times the sector ETF's 1-week return",
    "sma50_distance_pct": "(close / 50-session simple moving average - 1) x 100",
    "sma200_distance_pct": "(close / 200-session simple moving average - 1) x 100",
    "rsi14": "Wilder RSI over 14 sessions of close-to-close changes",
    "bb_position": "%B: (close - lower band) / (upper - lower), 20 sessions, 2 population deviations",
    "volume_ratio": "mean volume of the last 5 sessions / mean volume of the last 20",
    "atr_pct": "Wilder ATR over 14 sessions / close x 100",
    "volatility_annualised": "standard deviation of the last 252 daily simple returns x sqrt(252)",
}


class QuantProfile(BaseModel):
    """Every figure as of ``as_of`` (the last session on or before the requested date)."""

    model_config = ConfigDict(frozen=True)

    ticker: str
    as_of: date
    benchmark: str
    sector: str | None = None
    close: float
    return_1w: float | None = None
    return_1m: float | None = None
    return_3m: float | None = None
    return_ytd: float | None = None
    beta: float | None = None
    alpha_1w: float | None = None
    beta_sector: float | None = None
    alpha_1w_sector: float | None = None
    sma50_distance_pct: float | None = None
    sma200_distance_pct: float | None = None
    rsi14: float | None = None
    bb_position: float | None = None
    volume_ratio: float | None = None
    atr_pct: float | None = None
    volatility_annualised: float | None = None
    notes: tuple[str, ...] = ()

    def metrics(self) -> dict[str, float | None]:
        return {key: getattr(self, key) for key in UNITS}


def compute_profile(
    series: PriceSeries,
    *,
    benchmark: PriceSeries,
    sector: PriceSeries | None = None,
    as_of: date | None = None,
) -> QuantProfile:
    """The profile as of ``as_of`` (default: the last session); rows after it are never read.

    Every series is cut at the as-of session before anything is computed, so a file that runs past it
    gives the same profile as one that ends there.
    """
    requested = as_of or series.last_date
    if requested < series.first_date or requested > series.last_date:
        raise OutOfRange(
            f"as-of date {requested} is outside {series.ticker}'s prices "
            f"({series.first_date} .. {series.last_date})"
        )
    known = series.until(requested)
    session = known.last_date
    notes: list[str] = []
    if session != requested:
        notes.append(f"{requested} is not a trading session; using {session}")
    values = _returns(known.bars["adj_close"], session)
    values.update(_relative(known, benchmark.until(session), keys=("beta", "alpha_1w"), notes=notes))
    if sector is not None:
        values.update(
            _relative(known, sector.until(session), keys=("beta_sector", "alpha_1w_sector"), notes=notes)
        )
    values.update(_technicals(known))
    values["volatility_annualised"] = _volatility(known.bars["adj_close"], notes)
    values = {key: _finite(value) for key, value in values.items()}
    notes.extend(_missing_notes(values, known))
    return QuantProfile.model_validate(
        {
            "ticker": series.ticker,
            "as_of": session,
            "benchmark": benchmark.ticker,
            "sector": sector.ticker if sector is not None else None,
            "close": float(known.bars["close"].iloc[-1]),
            "notes": tuple(notes),
            **values,
        }
    )


def _returns(adjusted: pd.Series, session: date) -> dict[str, float | None]:
    values = {key: _trailing_return(adjusted, sessions) for key, sessions in SESSIONS.items()}
    values["return_ytd"] = _ytd_return(adjusted, session)
    return values


def _technicals(known: PriceSeries) -> dict[str, float | None]:
    """Indicators on the unadjusted bars, as a chart shows them."""
    bars = known.bars
    close = bars["close"]
    last_close = float(close.iloc[-1])
    values: dict[str, float | None] = {}
    for key, window in SMA_WINDOWS.items():
        average = indicators.sma(close, window)
        values[key] = (last_close / average - 1) * 100 if average else None
    values["rsi14"] = indicators.rsi(close)
    values["bb_position"] = indicators.bollinger_position(close)
    values["volume_ratio"] = indicators.volume_ratio(bars["volume"]) if known.has_volume else None
    true_range = indicators.atr(bars["high"], bars["low"], close)
    values["atr_pct"] = true_range / last_close * 100 if true_range is not None else None
    return values


def _missing_notes(values: dict[str, float | None], known: PriceSeries) -> list[str]:
    """Why each figure that could not be computed is missing (beta's reasons are noted where it is)."""
    notes = []
    sessions = len(known.bars)
    if values.get("return_ytd") is None:
        notes.append(f"return_ytd needs a session in {known.last_date.year - 1}; the data starts later")
    for key, needed in NEEDS.items():
        if values.get(key) is not None:
            continue
        if key == "volume_ratio" and not known.has_volume:
            notes.append("volume_ratio: no volume in this price file")
        elif sessions < needed:
            notes.append(f"{key} needs {needed} sessions; {sessions} known")
        else:
            notes.append(f"{key}: not defined on these bars (no movement, zero volume or a zero price)")
    return notes


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _trailing_return(adjusted: pd.Series, sessions: int) -> float | None:
    if len(adjusted) <= sessions:
        return None
    return float(adjusted.iloc[-1] / adjusted.iloc[-1 - sessions] - 1)


def _ytd_return(adjusted: pd.Series, session: date) -> float | None:
    before = adjusted.loc[adjusted.index < pd.Timestamp(session.year, 1, 1)]
    if before.empty:
        return None
    return float(adjusted.iloc[-1] / before.iloc[-1] - 1)


def _relative(
    known: PriceSeries, reference: PriceSeries, *, keys: tuple[str, str], notes: list[str]
) -> dict[str, float | None]:
    """Beta over the last 252 aligned daily returns, and the 1-week alpha residual, under ``keys``.

    Both need the reference's bar on the as-of session itself: a beta or a week ending on another day
    would pair this week's stock move with a different week of the market.
    """
    beta_key, alpha_key = keys
    session = known.last_date
    if reference.bars.empty or reference.last_date != session:
        notes.append(f"{beta_key} and {alpha_key}: {reference.ticker} has no bar on {session}")
        return {beta_key: None, alpha_key: None}
    aligned = pd.concat(
        [known.bars["adj_close"].rename("stock"), reference.bars["adj_close"].rename("reference")],
        axis=1,
        join="inner",
    )
    returns = aligned.pct_change().dropna().iloc[-BETA_SESSIONS:]
    if len(returns) < MIN_BETA_SESSIONS:
        notes.append(
            f"{beta_key} needs {MIN_BETA_SESSIONS} daily returns aligned with {reference.ticker}; "
            f"{len(returns)} known"
        )
        return {beta_key: None, alpha_key: None}
    if len(returns) < BETA_SESSIONS:
        notes.append(f"{beta_key} over {len(returns)} aligned daily returns, not {BETA_SESSIONS}")
    covariance = np.cov(returns["stock"], returns["reference"], ddof=1)
    if covariance[1, 1] == 0:
        notes.append(f"{beta_key}: {reference.ticker} did not move")
        return {beta_key: None, alpha_key: None}
    beta = float(covariance[0, 1] / covariance[1, 1])
    week = aligned.iloc[-1 - SESSIONS["return_1w"] :]
    stock_week = week["stock"].iloc[-1] / week["stock"].iloc[0] - 1
    reference_week = week["reference"].iloc[-1] / week["reference"].iloc[0] - 1
    return {beta_key: beta, alpha_key: float(stock_week - beta * reference_week)}


def _volatility(adjusted: pd.Series, notes: list[str]) -> float | None:
    """Sample deviation of the last 252 daily simple returns (as beta uses), annualised by sqrt(252)."""
    returns = adjusted.pct_change().dropna().iloc[-VOLATILITY_SESSIONS:]
    if len(returns) < MIN_BETA_SESSIONS:
        return None
    if len(returns) < VOLATILITY_SESSIONS:
        notes.append(f"volatility_annualised over {len(returns)} daily returns, not {VOLATILITY_SESSIONS}")
    return float(returns.std(ddof=1) * math.sqrt(TRADING_DAYS_PER_YEAR))
