"""Technical indicators on a full daily series; each returns the value on the series' last session.

Conventions (seed 002): Wilder's smoothing for RSI14 and ATR14 (seeded with the simple mean of the first
window, then ``avg = (avg * (n - 1) + x) / n``); Bollinger bands with the population standard deviation.
Each function returns None when the series is too short for the indicator.
"""

from __future__ import annotations

import numpy as np

RSI_WINDOW = 14
ATR_WINDOW = 14
BOLLINGER_WINDOW = 20
BOLLINGER_DEVIATIONS = 2.0
VOLUME_SHORT = 5
VOLUME_LONG = 20


def wilder_average(values: np.ndarray, window: int) -> float | None:
    """Wilder's running average of ``values`` at the last element (None with fewer than ``window``)."""
    if len(values) < window:
        return None
    average = float(values[:window].mean())
    weight = (window - 1) / window
    for value in values[window:].tolist():  # Python floats: the same arithmetic, without numpy's scalars
        average = average * weight + value / window
    return average


def rsi(close: np.ndarray, window: int = RSI_WINDOW) -> float | None:
    """Wilder's RSI: 100 - 100 / (1 + average gain / average loss) over ``window`` sessions of changes."""
    changes = np.diff(close)
    gains = wilder_average(np.clip(changes, 0, None), window)
    losses = wilder_average(np.clip(-changes, 0, None), window)
    if gains is None or losses is None:
        return None
    if losses == 0:
        return 100.0
    return 100.0 - 100.0 / (1.0 + gains / losses)


def true_range(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    """max(high - low, |high - previous close|, |low - previous close|); the first bar is high - low. A
    missing value is skipped (``fmax``), as a missing previous close is on the first bar."""
    previous = np.concatenate(([np.nan], close[:-1]))
    ranges: np.ndarray = np.fmax(np.fmax(high - low, np.abs(high - previous)), np.abs(low - previous))
    return ranges


def atr(high: np.ndarray, low: np.ndarray, close: np.ndarray, window: int = ATR_WINDOW) -> float | None:
    return wilder_average(true_range(high, low, close), window)


def sma(close: np.ndarray, window: int) -> float | None:
    if len(close) < window:
        return None
    return float(close[-window:].mean())


def bollinger_position(
    close: np.ndarray, window: int = BOLLINGER_WINDOW, deviations: float = BOLLINGER_DEVIATIONS
) -> float | None:
    """%B: where the close sits between the lower (0) and upper (1) band; outside the bands it leaves 0..1."""
    if len(close) < window:
        return None
    recent = close[-window:]
    middle, spread = recent.mean(), recent.std(ddof=0) * deviations
    if spread == 0:
        return None
    return float((recent[-1] - (middle - spread)) / (2 * spread))


def volume_ratio(volume: np.ndarray, short: int = VOLUME_SHORT, long: int = VOLUME_LONG) -> float | None:
    """Average volume of the last ``short`` sessions over the average of the last ``long``."""
    if len(volume) < long or np.isnan(volume[-long:]).any():
        return None
    baseline = float(volume[-long:].mean())
    return float(volume[-short:].mean()) / baseline if baseline > 0 else None
