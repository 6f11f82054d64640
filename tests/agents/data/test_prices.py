"""Every real price file loads ascending and clean, whatever its layout; live bars come from Stooq."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agents.data.errors import DataError, MalformedData, UnknownTicker
from agents.data.prices import LivePriceSource, SnapshotPriceSource, load_price_csv, parse_price_csv
from tests.agents.data import SHARED_DATA, SNAPSHOT, shared_file

ALL_PRICE_FILES = sorted((SHARED_DATA / "prices").glob("*/*.csv"))


def test_the_real_price_files_are_all_there() -> None:
    assert len(ALL_PRICE_FILES) >= 30


@pytest.mark.parametrize("path", ALL_PRICE_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_real_price_file_loads_ascending_without_gaps_in_closes(path: Path) -> None:
    series = load_price_csv(path)
    bars = series.bars
    assert bars.index.is_monotonic_increasing and not bars.index.has_duplicates
    assert not bars[["open", "high", "low", "close", "adj_close"]].isna().any().any()
    assert len(bars) >= 99


def test_yahoo_intraday_partial_last_bars_are_dropped() -> None:
    for name in ("SPY", "XLK", "XLY", "AGG"):
        series = load_price_csv(shared_file(f"prices/daily/{name}.csv"))
        assert series.last_date == date(2025, 1, 6), name
        assert series.dropped_partial_bar == date(2025, 1, 7), name


def test_a_finished_last_session_is_kept() -> None:
    series = load_price_csv(shared_file("prices/daily/AAPL_2012-2017_stocknet.csv"))
    assert series.last_date == date(2017, 9, 1) and series.dropped_partial_bar is None


def test_newest_first_files_come_out_ascending() -> None:
    series = load_price_csv(shared_file("prices/recent_2026/SPY.csv"))
    assert (series.first_date, series.last_date) == (date(2026, 3, 31), date(2026, 8, 21))
    assert series.bars["close"].iloc[-1] == pytest.approx(765.62)


def test_unadjusted_close_and_adjusted_close_are_both_kept_across_a_split() -> None:
    # stocknet's AAPL predates the 2020 4:1 split; its adjusted close differs by dividends only.
    series = load_price_csv(shared_file("prices/daily/AAPL_2012-2017_stocknet.csv"))
    last = series.bars.iloc[-1]
    assert last["close"] == pytest.approx(164.050003)
    first = series.bars.iloc[0]
    assert first["close"] == pytest.approx(96.424286) and first["adj_close"] == pytest.approx(87.12114)


def test_headers_in_other_spellings_and_orders() -> None:
    pandas_ta = load_price_csv(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
    assert pandas_ta.first_date == date(1999, 11, 1) and pandas_ta.bars["volume"].iloc[0] == 4006500
    fnspid = load_price_csv(shared_file("prices/fnspid_with_sentiment/QQQ.csv"))
    assert fnspid.first_date == date(2013, 1, 16)
    assert fnspid.bars["adj_close"].iloc[0] == pytest.approx(60.630367279052734)
    vix = load_price_csv(shared_file("prices/daily/VIX_daily_cboe.csv"))
    assert not vix.has_volume


def test_malformed_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such price file"):
        load_price_csv(tmp_path / "missing.csv")
    garbage = tmp_path / "garbage.csv"
    garbage.write_text("hello,world\n1,2\n")
    with pytest.raises(MalformedData, match="no close, date, high, low, open column"):
        load_price_csv(garbage)
    with pytest.raises(MalformedData, match="twice"):
        parse_price_csv(
            "Date,Open,High,Low,Close\n2020-01-02,1,1,1,1\n2020-01-02,1,1,1,1\n", ticker="X", source_label="x"
        )
    with pytest.raises(MalformedData, match="unreadable date"):
        parse_price_csv("Date,Open,High,Low,Close\nyesterday,1,1,1,1\n", ticker="X", source_label="x")


def test_snapshot_source_finds_bundled_files_and_refuses_unknown_tickers() -> None:
    source = SnapshotPriceSource(SNAPSHOT)
    assert source.series("ko").ticker == "KO"
    assert source.series("SPY").first_date == date(1999, 11, 1)
    with pytest.raises(UnknownTicker):
        source.series("ZZZZ")


STOOQ_RECORDED = b"""Date,Open,High,Low,Close,Volume
2024-07-08,227.09,227.85,223.25,227.82,59085861
2024-07-09,227.93,229.4,226.37,228.68,48169822
2024-07-10,229.3,233.08,229.25,232.98,62627687
"""


def test_live_source_reads_stooq_csv_through_the_fetcher() -> None:
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return STOOQ_RECORDED

    series = LivePriceSource(fetch).series("AAPL")
    assert asked == ["https://stooq.com/q/d/l/?s=aapl.us&i=d"]
    assert series.last_date == date(2024, 7, 10) and series.bars["close"].iloc[-1] == 232.98
    assert (series.bars["adj_close"] == series.bars["close"]).all()


def test_live_source_reports_unknown_symbols() -> None:
    with pytest.raises(UnknownTicker):
        LivePriceSource(lambda url: b"No data").series("ZZZZ")
