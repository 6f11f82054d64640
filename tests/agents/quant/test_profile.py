"""The quant profile on real series, cross-checked against the independent ``ta`` library and numpy.

On seeding: ta's ATR seeds Wilder's average with the mean of the first 14 true ranges, as we do, so ATR
agrees to 1e-6 on any length. ta's RSI instead runs ``ewm(alpha=1/14, adjust=False)`` from a zero seed on
the first bar, where Wilder (and we) seed with the mean of the first 14 changes. The two recursions are the
same after the seed, so they differ by the seed gap times (13/14)^(n-14): far below 1e-9 on the stocknet
and FNSPID files (over 1,000 sessions), but still 0.005 to 0.05 RSI points on the 100-session recent files.
We keep Wilder's definition (the one TradingView and TA-Lib use, and the one ta itself uses for ATR) and
check it three ways: against ta where the seed has decayed, against an independent pandas-ewm Wilder to
1e-9 everywhere, and against ta on the short files within the bound the seed difference allows.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest
from ta.momentum import RSIIndicator
from ta.trend import SMAIndicator
from ta.volatility import AverageTrueRange, BollingerBands

from agents.data.errors import OutOfRange
from agents.data.prices import PriceSeries, load_price_csv, parse_price_csv
from agents.quant import compute_profile
from tests.agents.data import shared_file

TOLERANCE = 1e-6
WINDOW = 14


def _load(relative: str) -> PriceSeries:
    return load_price_csv(shared_file(f"prices/{relative}"))


@pytest.fixture(scope="module")
def spy() -> PriceSeries:
    return _load("daily/SPY_1999-2020_pandas-ta.csv")


LONG_SERIES = [
    "daily/AAPL_2012-2017_stocknet.csv",
    "daily/KO_2012-2017_stocknet.csv",
    "fnspid_with_sentiment/KO.csv",
]
RECENT_SERIES = [
    "recent_2026/SPY.csv",
    "recent_2026/QQQ.csv",
    "recent_2026/XLE.csv",
    "recent_2026/XLF.csv",
    "recent_2026/XLK.csv",
    "recent_2026/XLV.csv",
]


def _wilder_rsi(close: pd.Series) -> tuple[float, float, float]:
    """RSI with its average gain and loss, Wilder's way, written independently of agents.quant."""
    changes = close.diff().dropna()
    averages = []
    for moves in (changes.clip(lower=0), (-changes).clip(lower=0)):
        seeded = pd.concat([pd.Series([moves.iloc[:WINDOW].mean()]), moves.iloc[WINDOW:]], ignore_index=True)
        averages.append(float(seeded.ewm(alpha=1 / WINDOW, adjust=False).mean().iloc[-1]))
    gain, loss = averages
    return 100 * gain / (gain + loss), gain, loss


def _assert_matches_ta_except_rsi(profile_values: dict[str, float | None], bars: pd.DataFrame) -> None:
    high, low, close = bars["high"], bars["low"], bars["close"]
    atr = AverageTrueRange(high, low, close, window=WINDOW).average_true_range().iloc[-1]
    assert profile_values["atr_pct"] == pytest.approx(atr / close.iloc[-1] * 100, abs=TOLERANCE)
    bands = BollingerBands(close, window=20, window_dev=2)
    assert profile_values["bb_position"] == pytest.approx(bands.bollinger_pband().iloc[-1], abs=TOLERANCE)
    for window, key in ((50, "sma50_distance_pct"), (200, "sma200_distance_pct")):
        if len(close) < window:
            assert profile_values[key] is None
            continue
        average = SMAIndicator(close, window=window).sma_indicator().iloc[-1]
        assert profile_values[key] == pytest.approx((close.iloc[-1] / average - 1) * 100, abs=TOLERANCE)


@pytest.mark.parametrize("relative", LONG_SERIES)
@pytest.mark.parametrize("as_of", [date(2017, 6, 30), None])
def test_technical_indicators_match_ta_on_long_series(
    relative: str, as_of: date | None, spy: PriceSeries
) -> None:
    series = _load(relative)
    profile = compute_profile(series, benchmark=spy, as_of=as_of)
    bars = series.until(profile.as_of).bars

    assert len(bars) > 1000  # ta's zero RSI seed has decayed by (13/14)^986 < 1e-30
    ta_rsi = RSIIndicator(bars["close"], window=WINDOW).rsi().iloc[-1]
    assert profile.rsi14 == pytest.approx(ta_rsi, abs=TOLERANCE)
    assert profile.rsi14 == pytest.approx(_wilder_rsi(bars["close"])[0], abs=1e-9)
    _assert_matches_ta_except_rsi(profile.metrics(), bars)


@pytest.mark.parametrize("relative", RECENT_SERIES)
def test_technical_indicators_match_ta_on_the_100_session_recent_files(relative: str) -> None:
    series = _load(relative)
    profile = compute_profile(series, benchmark=_load("recent_2026/SPY.csv"))
    bars = series.bars
    close = bars["close"]
    _assert_matches_ta_except_rsi(profile.metrics(), bars)

    wilder, gain, loss = _wilder_rsi(close)
    assert profile.rsi14 == pytest.approx(wilder, abs=1e-9)
    # ta differs only by its seed: each average is off by at most the largest of the first 14 moves times
    # (13/14)^(changes - 14); RSI moves by at most 100 (L dG + G dL) / ((G + L)(G + L - dG - dL)).
    first = close.diff().iloc[1 : WINDOW + 1].abs().max()
    decay = (1 - 1 / WINDOW) ** (len(close) - 1 - WINDOW)
    d_gain = d_loss = first * decay
    bound = 100 * (loss * d_gain + gain * d_loss) / ((gain + loss) * (gain + loss - d_gain - d_loss))
    ta_rsi = RSIIndicator(close, window=WINDOW).rsi().iloc[-1]
    assert profile.rsi14 is not None and abs(profile.rsi14 - ta_rsi) <= bound
    assert abs(profile.rsi14 - ta_rsi) < 0.1  # 0.005 to 0.05 on these six files


def test_beta_and_alpha_match_numpy_on_the_aligned_series(spy: PriceSeries) -> None:
    series = _load("daily/AAPL_2012-2017_stocknet.csv")
    sector = _load("daily/XLK.csv")
    day = date(2016, 12, 30)
    profile = compute_profile(series, benchmark=spy, sector=sector, as_of=day)

    def aligned(reference: PriceSeries) -> pd.DataFrame:
        joined = pd.concat([series.bars["adj_close"], reference.bars["adj_close"]], axis=1, join="inner")
        return joined.loc[joined.index <= pd.Timestamp(day)]

    def independent_beta(reference: PriceSeries) -> float:
        prices = aligned(reference).to_numpy()[-253:]
        returns = prices[1:] / prices[:-1] - 1
        matrix = np.cov(returns[:, 0], returns[:, 1])
        return float(matrix[0, 1] / matrix[1, 1])

    def independent_alpha(reference: PriceSeries) -> float:
        prices = aligned(reference).to_numpy()
        week = prices[-1] / prices[-6] - 1
        return float(week[0] - independent_beta(reference) * week[1])

    assert profile.beta == pytest.approx(independent_beta(spy), abs=TOLERANCE)
    assert profile.beta_sector == pytest.approx(independent_beta(sector), abs=TOLERANCE)
    assert profile.alpha_1w == pytest.approx(independent_alpha(spy), abs=TOLERANCE)
    assert profile.alpha_1w_sector == pytest.approx(independent_alpha(sector), abs=TOLERANCE)
    assert profile.beta is not None and 0.5 < profile.beta < 2


def test_returns_run_on_the_adjusted_close(spy: PriceSeries) -> None:
    series = _load("daily/AAPL_2012-2017_stocknet.csv")
    day = date(2016, 12, 30)
    profile = compute_profile(series, benchmark=spy, as_of=day)
    adjusted = series.until(day).bars["adj_close"]
    for key, sessions in (("return_1w", 5), ("return_1m", 21), ("return_3m", 63)):
        assert getattr(profile, key) == pytest.approx(adjusted.iloc[-1] / adjusted.iloc[-1 - sessions] - 1)
    # YTD on the last session of 2016 runs from the last session of 2015 (2015-12-31).
    assert profile.return_ytd == pytest.approx(adjusted.iloc[-1] / adjusted.loc["2015-12-31"] - 1)


def test_no_look_ahead_rows_after_the_as_of_date_change_nothing(spy: PriceSeries) -> None:
    as_of = date(2016, 3, 31)
    path = shared_file("prices/daily/KO_2012-2017_stocknet.csv")
    header, *rows = path.read_text().splitlines()
    cut = "\n".join([header, *(row for row in rows if row[:10] <= as_of.isoformat())])
    truncated = parse_price_csv(cut, ticker="KO", source_label="cut")
    spy_cut = spy.until(as_of)
    xlp = _load("daily/XLP.csv")

    full_profile = compute_profile(load_price_csv(path), benchmark=spy, sector=xlp, as_of=as_of)
    assert full_profile == compute_profile(truncated, benchmark=spy_cut, sector=xlp.until(as_of), as_of=as_of)
    assert full_profile.as_of == as_of


def test_as_of_outside_the_data_is_refused(spy: PriceSeries) -> None:
    series = _load("daily/KO_2012-2017_stocknet.csv")
    with pytest.raises(OutOfRange, match=r"2012-01-03 is outside KO's prices \(2012-09-04 \.\. 2017-09-01\)"):
        compute_profile(series, benchmark=spy, as_of=date(2012, 1, 3))
    with pytest.raises(OutOfRange, match="outside KO's prices"):
        compute_profile(series, benchmark=spy, as_of=date(2017, 9, 2))


def test_a_non_trading_as_of_uses_the_previous_session(spy: PriceSeries) -> None:
    series = _load("daily/KO_2012-2017_stocknet.csv")
    profile = compute_profile(series, benchmark=spy, as_of=date(2016, 7, 4))  # Independence Day, a Monday
    assert profile.as_of == date(2016, 7, 1)
    assert profile.notes[0] == "2016-07-04 is not a trading session; using 2016-07-01"
    on_the_session = compute_profile(series, benchmark=spy, as_of=date(2016, 7, 1))
    assert profile == on_the_session.model_copy(update={"notes": profile.notes})


def test_as_of_defaults_to_the_last_session(spy: PriceSeries) -> None:
    profile = compute_profile(_load("daily/KO_2012-2017_stocknet.csv"), benchmark=spy)
    assert profile.as_of == date(2017, 9, 1) and profile.close == pytest.approx(45.78, abs=1e-4)


def test_short_history_leaves_figures_out_and_says_why() -> None:
    series = _load("recent_2026/XLK.csv")
    profile = compute_profile(series, benchmark=_load("recent_2026/SPY.csv"))
    assert profile.sma200_distance_pct is None and profile.return_ytd is None
    assert profile.sma50_distance_pct is not None and profile.beta is not None
    assert "sma200_distance_pct needs 200 sessions; 100 known" in profile.notes
    assert "beta over 99 aligned daily returns, not 252" in profile.notes
    # 8 sessions to 2026-04-10 (Good Friday, 2026-04-03, had none).
    early = compute_profile(series, benchmark=_load("recent_2026/SPY.csv"), as_of=date(2026, 4, 10))
    assert early.rsi14 is None and early.beta is None and early.return_1m is None
    assert "rsi14 needs 15 sessions; 8 known" in early.notes


def test_beta_needs_the_benchmark_on_the_as_of_session() -> None:
    # recent_2026/QQQ ends on 2026-08-20, a session before SPY's file does.
    profile = compute_profile(_load("recent_2026/SPY.csv"), benchmark=_load("recent_2026/QQQ.csv"))
    assert profile.beta is None and profile.alpha_1w is None
    assert "beta and alpha_1w: QQQ has no bar on 2026-08-21" in profile.notes


def test_no_sector_leaves_the_sector_figures_empty(spy: PriceSeries) -> None:
    profile = compute_profile(_load("daily/KO_2012-2017_stocknet.csv"), benchmark=spy)
    assert profile.sector is None and profile.beta_sector is None and profile.alpha_1w_sector is None


def test_volume_ratio_and_volatility(spy: PriceSeries) -> None:
    series = _load("daily/KO_2012-2017_stocknet.csv")
    profile = compute_profile(series, benchmark=spy)
    volume = series.bars["volume"]
    assert profile.volume_ratio == pytest.approx(volume.iloc[-5:].mean() / volume.iloc[-20:].mean())
    adjusted = series.bars["adj_close"].to_numpy()[-253:]
    returns = adjusted[1:] / adjusted[:-1] - 1
    assert profile.volatility_annualised == pytest.approx(np.std(returns, ddof=1) * np.sqrt(252))


def test_a_series_without_volume_has_no_volume_ratio(spy: PriceSeries) -> None:
    vix = compute_profile(_load("daily/VIX_daily_cboe.csv"), benchmark=spy, as_of=date(2015, 6, 30))
    assert vix.volume_ratio is None and vix.rsi14 is not None
    assert "volume_ratio: no volume in this price file" in vix.notes


@pytest.mark.parametrize("relative", ["daily/AAPL_2012-2017_stocknet.csv", "daily/XLK.csv"])
def test_the_figures_are_pandas_definitions_to_the_last_bit(spy: PriceSeries, relative: str) -> None:
    """The profile runs on numpy arrays; a fact's value must not move by a bit for it (the facts, the
    prompts that cite them and the ledger's keys would all change). Each figure as pandas states it."""
    series = _load(relative)
    day = date(2016, 12, 30)
    profile = compute_profile(series, benchmark=spy, as_of=day)
    known = series.until(day).bars
    joined = pd.concat(
        [known["adj_close"].rename("stock"), spy.until(day).bars["adj_close"].rename("market")],
        axis=1,
        join="inner",
    )
    returns = joined.pct_change().dropna().iloc[-252:]
    matrix = np.cov(returns["stock"], returns["market"], ddof=1)
    beta = float(matrix[0, 1] / matrix[1, 1])
    week = joined.iloc[-6:]
    market_week = week["market"].iloc[-1] / week["market"].iloc[0] - 1
    own_returns = known["adj_close"].pct_change().dropna().iloc[-252:]
    close = known["close"]
    previous = close.shift(1)
    ranges = pd.concat(
        [known["high"] - known["low"], (known["high"] - previous).abs(), (known["low"] - previous).abs()],
        axis=1,
    )
    atr = float(ranges.max(axis=1).iloc[:14].mean())
    for value in ranges.max(axis=1).iloc[14:]:
        atr = atr * (13 / 14) + float(value) / 14  # Wilder: the weight is (n - 1) / n
    assert profile.beta == beta
    assert profile.alpha_1w == float(profile.return_1w - beta * market_week)
    assert profile.volatility_annualised == float(own_returns.std(ddof=1) * np.sqrt(252))
    assert profile.sma50_distance_pct == (float(close.iloc[-1]) / float(close.iloc[-50:].mean()) - 1) * 100
    assert profile.atr_pct == atr / float(close.iloc[-1]) * 100
    assert profile.return_ytd == float(
        known["adj_close"].iloc[-1] / known["adj_close"].loc[: pd.Timestamp(2015, 12, 31)].iloc[-1] - 1
    )
