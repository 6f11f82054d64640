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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class _Bars:
    """A series' bars up to one session as numpy arrays, ascending (PriceSeries keeps its bars so). The
    profile is some twenty small operations a series; on arrays they cost microseconds where pandas' own
    bookkeeping cost milliseconds (a screen computes 88 profiles on its path: 290 ms, now about 50), and the
    arithmetic is the same operation for operation, so every figure is the same to the last bit."""

    days: np.ndarray  # datetime64
    adjusted: np.ndarray
    close: np.ndarray
    high: np.ndarray
    low: np.ndarray
    volume: np.ndarray

    @classmethod
    def until(cls, series: PriceSeries, session: date) -> _Bars:
        """Only the bars on or before ``session``: what was known that day (no look-ahead)."""
        known = series.sessions_until(session)
        column = {field: series.bars[name].to_numpy(dtype=float)[:known] for field, name in _COLUMNS.items()}
        return cls(days=series.bars.index.to_numpy()[:known], **column)

    @property
    def last_day(self) -> date:
        return _to_date(self.days[-1])

    @property
    def has_volume(self) -> bool:
        return bool((~np.isnan(self.volume)).any())


_COLUMNS = {"adjusted": "adj_close", "close": "close", "high": "high", "low": "low", "volume": "volume"}


def _to_date(day: np.datetime64) -> date:
    return pd.Timestamp(day).date()


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
    known = _Bars.until(series, requested)
    session = known.last_day
    notes: list[str] = []
    if session != requested:
        notes.append(f"{requested} is not a trading session; using {session}")
    values = _returns(known)
    values.update(
        _relative(
            known, _Bars.until(benchmark, session), benchmark.ticker, keys=("beta", "alpha_1w"), notes=notes
        )
    )
    if sector is not None:
        values.update(
            _relative(
                known,
                _Bars.until(sector, session),
                sector.ticker,
                keys=("beta_sector", "alpha_1w_sector"),
                notes=notes,
            )
        )
    values.update(_technicals(known))
    values["volatility_annualised"] = _volatility(known.adjusted, notes)
    values = {key: _finite(value) for key, value in values.items()}
    notes.extend(_missing_notes(values, known))
    return QuantProfile.model_validate(
        {
            "ticker": series.ticker,
            "as_of": session,
            "benchmark": benchmark.ticker,
            "sector": sector.ticker if sector is not None else None,
            "close": float(known.close[-1]),
            "notes": tuple(notes),
            **values,
        }
    )


def _returns(known: _Bars) -> dict[str, float | None]:
    values = {key: _trailing_return(known.adjusted, sessions) for key, sessions in SESSIONS.items()}
    values["return_ytd"] = _ytd_return(known)
    return values


def _technicals(known: _Bars) -> dict[str, float | None]:
    """Indicators on the unadjusted bars, as a chart shows them."""
    close = known.close
    last_close = float(close[-1])
    values: dict[str, float | None] = {}
    for key, window in SMA_WINDOWS.items():
        average = indicators.sma(close, window)
        values[key] = (last_close / average - 1) * 100 if average else None
    values["rsi14"] = indicators.rsi(close)
    values["bb_position"] = indicators.bollinger_position(close)
    values["volume_ratio"] = indicators.volume_ratio(known.volume) if known.has_volume else None
    true_range = indicators.atr(known.high, known.low, close)
    values["atr_pct"] = true_range / last_close * 100 if true_range is not None else None
    return values


def _missing_notes(values: dict[str, float | None], known: _Bars) -> list[str]:
    """Why each figure that could not be computed is missing (beta's reasons are noted where it is)."""
    notes = []
    sessions = len(known.days)
    if values.get("return_ytd") is None:
        notes.append(f"return_ytd needs a session in {known.last_day.year - 1}; the data starts later")
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


def _trailing_return(adjusted: np.ndarray, sessions: int) -> float | None:
    if len(adjusted) <= sessions:
        return None
    return float(adjusted[-1] / adjusted[-1 - sessions] - 1)


def _ytd_return(known: _Bars) -> float | None:
    """Over the last adjusted close of the previous calendar year."""
    before = int(np.searchsorted(known.days, np.datetime64(date(known.last_day.year, 1, 1)), side="left"))
    if before == 0:
        return None
    return float(known.adjusted[-1] / known.adjusted[before - 1] - 1)


def _daily_returns(prices: np.ndarray) -> np.ndarray:
    """Each session's simple return on the one before (``pct_change``); the first session has none."""
    returns: np.ndarray = prices[1:] / prices[:-1] - 1
    return returns


def _relative(
    known: _Bars, reference: _Bars, ticker: str, *, keys: tuple[str, str], notes: list[str]
) -> dict[str, float | None]:
    """Beta over the last 252 aligned daily returns, and the 1-week alpha residual, under ``keys``.

    Both need the reference's bar on the as-of session itself: a beta or a week ending on another day
    would pair this week's stock move with a different week of the market.
    """
    beta_key, alpha_key = keys
    session = known.last_day
    if len(reference.days) == 0 or reference.last_day != session:
        notes.append(f"{beta_key} and {alpha_key}: {ticker} has no bar on {session}")
        return {beta_key: None, alpha_key: None}
    # The sessions both series traded, in order; a return is from one such session to the next.
    _, mine, theirs = np.intersect1d(known.days, reference.days, assume_unique=True, return_indices=True)
    stock, market = known.adjusted[mine], reference.adjusted[theirs]
    stock_returns, market_returns = _daily_returns(stock), _daily_returns(market)
    both = ~(np.isnan(stock_returns) | np.isnan(market_returns))
    stock_returns, market_returns = (
        stock_returns[both][-BETA_SESSIONS:],
        market_returns[both][-BETA_SESSIONS:],
    )
    if len(stock_returns) < MIN_BETA_SESSIONS:
        notes.append(
            f"{beta_key} needs {MIN_BETA_SESSIONS} daily returns aligned with {ticker}; "
            f"{len(stock_returns)} known"
        )
        return {beta_key: None, alpha_key: None}
    if len(stock_returns) < BETA_SESSIONS:
        notes.append(f"{beta_key} over {len(stock_returns)} aligned daily returns, not {BETA_SESSIONS}")
    covariance = np.cov(stock_returns, market_returns, ddof=1)
    if covariance[1, 1] == 0:
        notes.append(f"{beta_key}: {ticker} did not move")
        return {beta_key: None, alpha_key: None}
    beta = float(covariance[0, 1] / covariance[1, 1])
    week = -1 - SESSIONS["return_1w"]
    stock_week = stock[week:][-1] / stock[week:][0] - 1
    market_week = market[week:][-1] / market[week:][0] - 1
    return {beta_key: beta, alpha_key: float(stock_week - beta * market_week)}


def _volatility(adjusted: np.ndarray, notes: list[str]) -> float | None:
    """Sample deviation of the last 252 daily simple returns (as beta uses), annualised by sqrt(252)."""
    returns = _daily_returns(adjusted)
    returns = returns[~np.isnan(returns)][-VOLATILITY_SESSIONS:]
    if len(returns) < MIN_BETA_SESSIONS:
        return None
    if len(returns) < VOLATILITY_SESSIONS:
        notes.append(f"volatility_annualised over {len(returns)} daily returns, not {VOLATILITY_SESSIONS}")
    return float(returns.std(ddof=1) * math.sqrt(TRADING_DAYS_PER_YEAR))
