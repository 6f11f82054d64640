"""Every real price file loads ascending and clean, whatever its layout; live bars come from Stooq."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from agents.data import prices
from agents.data.errors import DataError, MalformedData, UnknownTicker
from agents.data.prices import (
    NEW_YORK,
    LivePriceSource,
    PriceFolders,
    PriceSeries,
    SnapshotPriceSource,
    load_price_csv,
    parse_price_csv,
)
from tests.agents.data import SHARED_DATA, SNAPSHOT, shared_file

PRICE_FOLDERS = ("daily", "fnspid_with_sentiment", "recent_2026")
ALL_PRICE_FILES = sorted(
    path for folder in PRICE_FOLDERS for path in (SHARED_DATA / "prices" / folder).glob("*.csv")
)
# cweill/qstrader-examples: downloaded on 2025-01-07 during the session (PROVENANCE.md).
INTRADAY_DOWNLOADS = ["SPY", "AGG", "XLB", "XLC", "XLE", "XLF", "XLI", "XLK", "XLP", "XLV", "XLY"]


def test_the_real_price_files_are_all_there() -> None:
    assert len(ALL_PRICE_FILES) == 32


@pytest.mark.parametrize("path", ALL_PRICE_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_real_price_file_loads_ascending_without_gaps_in_closes(path: Path) -> None:
    series = load_price_csv(path)
    bars = series.bars
    assert bars.index.is_monotonic_increasing and not bars.index.has_duplicates
    assert not bars[["open", "high", "low", "close", "adj_close"]].isna().any().any()
    assert list(bars.columns) == ["open", "high", "low", "close", "adj_close", "volume"]
    assert len(bars) >= 99 and series.path == path


@pytest.mark.parametrize("ticker", INTRADAY_DOWNLOADS)
def test_the_intraday_partial_last_bar_of_each_qstrader_download_is_dropped(ticker: str) -> None:
    series = load_price_csv(shared_file(f"prices/daily/{ticker}.csv"))
    assert series.last_date == date(2025, 1, 6)
    assert series.dropped_partial_bar == date(2025, 1, 7)


def test_spy_ends_on_the_last_finished_session() -> None:
    series = load_price_csv(shared_file("prices/daily/SPY.csv"))
    assert series.last_date == date(2025, 1, 6)
    assert series.bars["close"].iloc[-1] == pytest.approx(595.359985)
    assert series.bars.loc["2024-12-31", "close"] == pytest.approx(586.08, abs=1e-4)  # PROVENANCE spot check


def test_finished_last_sessions_are_kept() -> None:
    for relative in ("daily/AAPL_2012-2017_stocknet.csv", "recent_2026/XLF.csv", "daily/VIX_daily_cboe.csv"):
        series = load_price_csv(shared_file(f"prices/{relative}"))
        assert series.dropped_partial_bar is None, relative
    # recent_2026/XLF's last close is a half cent (57.495), but that feed prints sub-penny highs and lows
    # on finished days too, so the sub-penny sign does not apply to it.
    assert load_price_csv(shared_file("prices/recent_2026/XLF.csv")).last_date == date(2026, 8, 21)


def test_a_thin_but_finished_half_day_is_kept_where_the_file_reports_volume_in_lots(tmp_path: Path) -> None:
    # The day after Thanksgiving 2023 traded 29.7 M shares against a ~60 M median: thin, but finished.
    lines = shared_file("prices/daily/SPY.csv").read_text().splitlines()
    cut = tmp_path / "SPY.csv"
    cut.write_text("\n".join(line for line in lines if line[:10] <= "2023-11-24" or line.startswith("Date")))
    series = load_price_csv(cut)
    assert series.last_date == date(2023, 11, 24) and series.dropped_partial_bar is None


def test_a_thin_last_bar_is_dropped_where_the_file_gives_no_stronger_sign() -> None:
    # recent_2026 counts shares exactly and prints sub-penny prices, so only volume can tell.
    text = shared_file("prices/recent_2026/SPY.csv").read_text()
    header, newest, *older = text.splitlines()
    fields = newest.split(",")
    fields[-1] = str(int(int(fields[-1]) * 0.4))
    series = parse_price_csv("\n".join([header, ",".join(fields), *older]), ticker="SPY", source_label="x")
    assert series.dropped_partial_bar == date(2026, 8, 21) and series.last_date == date(2026, 8, 20)


def test_newest_first_files_come_out_ascending() -> None:
    series = load_price_csv(shared_file("prices/recent_2026/SPY.csv"))
    assert (series.first_date, series.last_date) == (date(2026, 3, 31), date(2026, 8, 21))
    assert series.bars.index.is_monotonic_increasing
    assert series.bars["close"].iloc[-1] == pytest.approx(765.62)
    assert (series.bars["adj_close"] == series.bars["close"]).all()  # the file has no adjusted close


def test_unadjusted_close_and_adjusted_close_are_both_kept_across_a_split() -> None:
    # stocknet's AAPL predates the 2020 4:1 split (FNSPID's file shows 41.01 for the same day); its
    # adjusted close differs from the close by dividends only.
    series = load_price_csv(shared_file("prices/daily/AAPL_2012-2017_stocknet.csv"))
    assert series.last_date == date(2017, 9, 1)
    assert series.bars["close"].iloc[-1] == pytest.approx(164.05, abs=1e-4)
    first = series.bars.iloc[0]
    assert first["close"] == pytest.approx(96.424286) and first["adj_close"] == pytest.approx(87.12114)
    fnspid = load_price_csv(shared_file("prices/daily/AAPL_1980-2024_fnspid.csv"))
    assert fnspid.bars.loc["2017-09-01", "close"] == pytest.approx(41.0125, abs=1e-3)


def test_headers_in_other_spellings_and_orders() -> None:
    pandas_ta = load_price_csv(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
    assert pandas_ta.first_date == date(1999, 11, 1) and pandas_ta.bars["volume"].iloc[0] == 4006500
    assert pandas_ta.bars.loc["2020-08-28", "close"] == pytest.approx(350.58, abs=1e-4)
    fnspid = load_price_csv(shared_file("prices/fnspid_with_sentiment/QQQ.csv"))  # Volume first, +00:00
    assert fnspid.first_date == date(2013, 1, 16)
    assert fnspid.bars["adj_close"].iloc[0] == pytest.approx(60.630367279052734)
    assert fnspid.bars["volume"].iloc[0] == 33822300
    vix = load_price_csv(shared_file("prices/daily/VIX_daily_cboe.csv"))  # DATE,OPEN,...; no volume
    assert not vix.has_volume and vix.bars.loc["2020-03-16", "close"] == pytest.approx(82.69)


def test_a_missing_file_is_a_data_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no such price file: .*missing\.csv"):
        load_price_csv(tmp_path / "missing.csv")


def test_files_that_are_not_daily_prices_are_malformed(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.csv"
    garbage.write_text("hello,world\n1,2\n")
    with pytest.raises(MalformedData, match="no close, date, high, low, open column"):
        load_price_csv(garbage)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x00\x01\xff\xfe binary")
    with pytest.raises(MalformedData, match="cannot read"):
        load_price_csv(binary)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(MalformedData, match="not a CSV of daily prices"):
        load_price_csv(empty)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Date,Open,High,Low,Close\n2020-01-02,1,1,1,1\n2020-01-02,1,1,1,1\n", "lists 2020-01-02 twice"),
        ("Date,Open,High,Low,Close\nyesterday,1,1,1,1\n", "unreadable date"),
        ("Date,Open,High,Low,Close\n2020-01-02,1,1,1,1\n2020-01-03,1,null,1,1\n", "on 2020-01-03"),
        ("Date,Open,High,Low,Close\n", "no price rows"),
    ],
)
def test_rows_that_are_not_daily_bars_are_malformed(text: str, message: str) -> None:
    with pytest.raises(MalformedData, match=message):
        parse_price_csv(text, ticker="X", source_label="x.csv")


def test_snapshot_source_finds_bundled_files_and_refuses_unknown_tickers() -> None:
    source = SnapshotPriceSource(SNAPSHOT)
    ko = source.series("ko")
    assert ko.ticker == "KO" and ko.path is not None and ko.path.name == "KO_2012-2017_stocknet.csv"
    assert source.series("SPY").first_date == date(1999, 11, 1)
    with pytest.raises(UnknownTicker):
        source.series("ZZZZ")


def test_snapshot_source_reads_plain_ticker_file_names() -> None:
    # ../shared/data holds both SPY.csv and SPY_1999-2020_pandas-ta.csv; the larger (longer) one wins.
    source = SnapshotPriceSource(SHARED_DATA)
    assert source.series("XLK").source_label == "XLK.csv"
    assert source.series("SPY").first_date == date(1993, 1, 29)


def test_a_folder_is_looked_up_again_once_a_file_comes_or_goes(tmp_path: Path) -> None:
    """The folder's listing is kept while it stays as it is: a file written into it later (a refresh, an
    admin's upload) is found by the next lookup, and a removed one is no longer offered."""
    (tmp_path / "ABC.csv").write_text(BARS)
    source = PriceFolders([tmp_path])
    assert source.path_for("abc").name == "ABC.csv"
    longer = BARS + "2024-01-05,11,12,10,11.5,11.5,1000\n"
    (tmp_path / "ABC_2024_refreshed.csv").write_text(longer)
    assert source.path_for("ABC").name == "ABC_2024_refreshed.csv"  # the larger file wins
    with pytest.raises(UnknownTicker):
        source.path_for("ABCD")
    (tmp_path / "ABC_2024_refreshed.csv").unlink()
    assert source.path_for("ABC").name == "ABC.csv"


BARS = "date,open,high,low,close,adj_close,volume\n2024-01-04,10,11,9,10.5,10.5,900\n"


STOOQ_RECORDED = b"""Date,Open,High,Low,Close,Volume
2024-07-08,227.09,227.85,223.25,227.82,59085861
2024-07-09,227.93,229.4,226.37,228.68,48169822
2024-07-10,229.3,233.08,229.25,232.98,62627687
"""
AFTER_THE_CLOSE = datetime(2024, 7, 10, 18, 0, tzinfo=NEW_YORK)


def test_live_source_reads_stooq_csv_through_the_fetcher() -> None:
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return STOOQ_RECORDED

    series = LivePriceSource(fetch, now=lambda: AFTER_THE_CLOSE).series("AAPL")
    assert asked == ["https://stooq.com/q/d/l/?s=aapl.us&i=d"]
    assert series.ticker == "AAPL" and series.source_label == asked[0]
    assert series.last_date == date(2024, 7, 10) and series.bars["close"].iloc[-1] == 232.98
    assert (series.bars["adj_close"] == series.bars["close"]).all()


def test_live_source_drops_todays_bar_while_the_session_is_open() -> None:
    morning = datetime(2024, 7, 10, 11, 30, tzinfo=NEW_YORK)
    series = LivePriceSource(lambda url: STOOQ_RECORDED, now=lambda: morning).series("AAPL")
    assert series.last_date == date(2024, 7, 9) and series.dropped_partial_bar == date(2024, 7, 10)


def test_live_source_reports_unknown_symbols_and_answers_that_are_not_prices() -> None:
    with pytest.raises(UnknownTicker):
        LivePriceSource(lambda url: b"No data").series("ZZZZ")
    with pytest.raises(MalformedData, match="sent no daily prices for AAPL: 'Exceeded"):
        LivePriceSource(lambda url: b"Exceeded the daily hits limit").series("AAPL")


def test_a_file_is_parsed_once_while_it_stays_the_same_and_each_caller_gets_its_own_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real = prices.parse_price_csv

    def counted(text: str, **where: Any) -> PriceSeries:
        parsed.append(where["source_label"])
        return real(text, **where)

    monkeypatch.setattr(prices, "parse_price_csv", counted)
    path = tmp_path / "ABC_2015.csv"
    path.write_text(
        "date,open,high,low,close,volume\n2015-08-20,1,1,1,10.00,100\n2015-08-21,1,1,1,11.00,100\n"
    )
    first = load_price_csv(path)
    first.bars.loc[first.bars.index[-1], "close"] = 99.0  # a caller that changes its copy
    first.bars["signal"] = 1.0  # or adds a column to it
    first.bars["volume"] *= 2  # or changes a whole column in place
    second = load_price_csv(path)
    assert second.bars["close"].tolist() == [10.0, 11.0] and second.ticker == "ABC"
    assert list(second.bars.columns) == list(first.bars.columns)[:-1]
    assert second.bars["volume"].tolist() == [100.0, 100.0]
    assert second.bars is not first.bars and parsed == ["ABC_2015.csv"]  # parsed once
    # A rewritten file (its size changes) is read again, not served from what was parsed before.
    path.write_text(
        "date,open,high,low,close,volume\n2015-08-20,1,1,1,10.00,100\n2015-08-21,1,1,1,12.5,100\n"
    )
    assert load_price_csv(path).bars["close"].tolist() == [10.0, 12.5] and len(parsed) == 2
    path.unlink()
    with pytest.raises(DataError, match="no such price file"):
        load_price_csv(path)
