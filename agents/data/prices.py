"""Daily price bars from the files as they really are, and from a live provider, as one ``PriceSeries``.

Quirks handled (see ``../shared/data/PROVENANCE.md``): Yahoo headers (``Adj Close``, or ``Adj close``),
lower-case headers, an unnamed leading index column, float volumes, ``+00:00`` on dates, columns in any
order, newest-first files (``timestamp,open,...``), no volume column (VIX), and an intraday partial bar as the
last row of a download.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import lru_cache
from pathlib import Path
from typing import Protocol
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from agents.data.errors import DataError, MalformedData, UnknownTicker
from agents.data.http import Fetcher, FetchError

COLUMNS = ("open", "high", "low", "close", "adj_close", "volume")
PRICE_COLUMNS = ("open", "high", "low", "close")
_ALIASES = {
    "date": "date",
    "timestamp": "date",
    "open": "open",
    "high": "high",
    "low": "low",
    "close": "close",
    "adj close": "adj_close",
    "adj_close": "adj_close",
    "adjclose": "adj_close",
    "volume": "volume",
}
# A download taken while the market is open ends with an intraday bar whose "close" is only the last trade.
# The file does not say when it was taken, so the last row (and only the last row) is judged against the
# previous 20 sessions of the same file. Two strong signs, each usable only where the file's own history
# shows the convention it relies on, and decisive when it fires:
#   * lots: every one of the 20 volumes is a whole number of 100-share lots (the chance of that by accident is
#     1e-40) and the last is not: a running intraday count (XLY 2025-01-07: 2,128,836);
#   * cents: every open, high, low and close of the 20 sits on the cent grid (official prices) and the last
#     close does not: a live sub-penny print (XLK 2025-01-07 "closed" at 233.161697, XLF at 48.224998).
# The weak sign is the rule of thumb: volume under 60 % of the 20-session median (SPY 2025-01-07: 27.2 M
# against ~48 M). It is used only when neither strong sign can be read (exact-count volumes and sub-penny
# highs and lows, as in Stooq's and the recent_2026 files), because finished sessions trip it too: 588 of
# SPY's 8,041 sessions since 1993 traded under 60 % of their median (half days, 2020-04-20, 2024-05-08), and
# a real last session must not vanish from a file that happens to end on one. On the qstrader files the
# strong signs catch all eleven 2025-01-07 bars; volume alone would catch two (SPY, AGG).
PARTIAL_BAR_VOLUME_SHARE = 0.6
PARTIAL_BAR_LOOKBACK = 20
LOT = 100
# Of a cent: float noise in the files (97.279999 is 97.28; float32 files drift by up to ~0.002 cent at $400)
# stays well inside it, and the sub-penny prints of partial bars (0.17 and 0.5 cent) fall well outside.
CENT_TOLERANCE = 0.05
STOOQ_URL = "https://stooq.com/q/d/l/?s={symbol}.us&i=d"
# The only host a live price fetcher may reach (``agents.data.http.http_fetcher``'s allow-list).
STOOQ_HOSTS = frozenset({"stooq.com"})
# Stooq's whole daily history of a ticker is one CSV row a day: about 0.6 MB for AAPL since 1984.
STOOQ_MAX_BYTES = 5 * 1024 * 1024
NEW_YORK = ZoneInfo("America/New_York")
# US equities close at 16:00 New York time; a bar dated today fetched before this is still moving.
SESSION_CLOSE = time(16, 0)


@dataclass(frozen=True, eq=False)  # eq=False: a DataFrame has no truth value; series compare by identity
class PriceSeries:
    """Ascending daily bars indexed by ``date`` (datetime64), float columns ``COLUMNS``.

    ``adj_close`` equals ``close`` where the file has no adjusted close; ``volume`` is NaN where it has none.
    ``source_label`` (the file name or URL) and ``path`` (the file, when there is one) are for citations.
    """

    ticker: str
    bars: pd.DataFrame
    source_label: str
    dropped_partial_bar: date | None = None
    path: Path | None = None

    @property
    def first_date(self) -> date:
        return _to_date(self.bars.index[0])

    @property
    def last_date(self) -> date:
        return _to_date(self.bars.index[-1])

    @property
    def has_volume(self) -> bool:
        return bool(self.bars["volume"].notna().any())

    def until(self, as_of: date) -> PriceSeries:
        """Only the bars on or before ``as_of``: what was known that day (no look-ahead)."""
        return dataclasses.replace(self, bars=self.bars.iloc[: self.sessions_until(as_of)])

    def sessions_until(self, as_of: date) -> int:
        """How many bars fall on or before ``as_of``: they are the first ones, the bars being ascending."""
        return int(np.searchsorted(self.bars.index.to_numpy(), np.datetime64(as_of), side="right"))


def _to_date(value: pd.Timestamp) -> date:
    return pd.Timestamp(value).date()


def parse_price_csv(text: str, *, ticker: str, source_label: str, path: Path | None = None) -> PriceSeries:
    """Parse one CSV of daily bars; raises MalformedData naming ``source_label`` when it is not one."""
    frame = _read_columns(text, source_label)
    dates = pd.to_datetime(frame["date"].astype(str).str.slice(0, 10), format="%Y-%m-%d", errors="coerce")
    if dates.isna().any():
        bad = frame["date"][dates.isna()].iloc[0]
        raise MalformedData(f"{source_label} has a row with an unreadable date: {bad!r}")
    if frame.empty:
        raise MalformedData(f"{source_label} has no price rows")
    bars = _numeric_bars(frame, pd.DatetimeIndex(dates, name="date"), source_label)
    if bars.index.has_duplicates:
        duplicate = bars.index[bars.index.duplicated()][0]
        raise MalformedData(f"{source_label} lists {duplicate.date()} twice")
    bars, dropped = _drop_partial_last_bar(bars.sort_index())
    return PriceSeries(
        ticker=ticker.upper(), bars=bars, source_label=source_label, dropped_partial_bar=dropped, path=path
    )


def _read_columns(text: str, source_label: str) -> pd.DataFrame:
    """The CSV with its columns renamed to ``date`` and ``COLUMNS`` (whatever their spelling and order)."""
    try:
        raw = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split())  # pandas' messages end in a newline; ours are one line
        raise MalformedData(f"{source_label} is not a CSV of daily prices: {reason}") from exc
    renamed = {column: _ALIASES.get(str(column).strip().lower()) for column in raw.columns}
    # Unknown columns (an unnamed index, FNSPID's sentiment columns) are left out.
    frame = raw.rename(columns={k: v for k, v in renamed.items() if v}).loc[
        :, [v for v in renamed.values() if v]
    ]
    missing = {"date", *PRICE_COLUMNS} - set(frame.columns)
    if missing:
        raise MalformedData(
            f"{source_label} is not a CSV of daily prices: no {', '.join(sorted(missing))} column"
        )
    return frame


def _numeric_bars(frame: pd.DataFrame, index: pd.DatetimeIndex, source_label: str) -> pd.DataFrame:
    bars = pd.DataFrame(index=index)
    for column in COLUMNS:  # "close" comes before "adj_close", which falls back to it
        if column in frame.columns:
            bars[column] = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        elif column == "adj_close":
            bars[column] = bars["close"]
        else:
            bars[column] = np.nan
    # A row with no price at all ("null" in each column, as Yahoo wrote a day it had no bar for) is a missing
    # session, left out; a row with some prices and not others is a broken file.
    bars = bars.loc[~bars[list(PRICE_COLUMNS)].isna().all(axis=1)]
    if bars.empty:
        raise MalformedData(f"{source_label} has no price rows")
    incomplete = bars[list(PRICE_COLUMNS)].isna().any(axis=1)
    if incomplete.any():
        day = _to_date(bars.index[incomplete.to_numpy()][0])
        raise MalformedData(f"{source_label} has no numeric open, high, low and close on {day}")
    return bars


def _drop_partial_last_bar(bars: pd.DataFrame) -> tuple[pd.DataFrame, date | None]:
    """The bars without an intraday last row, and that row's date (the rule is above ``PARTIAL_BAR_*``)."""
    if len(bars) <= PARTIAL_BAR_LOOKBACK:
        return bars, None
    previous = bars.iloc[-PARTIAL_BAR_LOOKBACK - 1 : -1]
    last = bars.iloc[-1]
    volumes = previous["volume"].to_numpy(dtype=float)
    in_lots = bool(np.isfinite(volumes).all() and (volumes % LOT == 0).all())
    in_cents = bool(_on_cent_grid(previous[list(PRICE_COLUMNS)].to_numpy(dtype=float)).all())
    odd_count = in_lots and float(last["volume"]) % LOT != 0
    sub_penny = in_cents and not bool(_on_cent_grid(np.array([float(last["close"])])).all())
    median = float(np.nanmedian(volumes)) if np.isfinite(volumes).any() else 0.0
    thin = median > 0 and float(last["volume"]) < PARTIAL_BAR_VOLUME_SHARE * median
    if odd_count or sub_penny or (thin and not in_lots and not in_cents):
        return bars.iloc[:-1], _to_date(bars.index[-1])
    return bars, None


def _on_cent_grid(prices: np.ndarray) -> np.ndarray:
    cents = prices * 100
    on_grid: np.ndarray = np.abs(cents - np.round(cents)) < CENT_TOLERANCE
    return on_grid


def load_price_csv(path: str | Path, *, ticker: str | None = None) -> PriceSeries:
    """A price file; the ticker defaults to the file name before its first ``_`` (``AAPL_2012-2017...``).

    A file is parsed once per process while it stays as it is (its size and modification time): a screen reads
    some ninety files, and parsing them took 1.2 s of its run and 1.5 s of the week's choice of its latest
    week, every time. Each caller gets its own frame of the bars, so none can change another's: a shallow
    copy, since pandas 3 copies a column's values on their first write (copy-on-write), and a deep one cost
    95 us a file against 26 (a screen reads each of its ninety files twice)."""
    file = Path(path)
    try:
        stat = file.stat()
    except FileNotFoundError as exc:
        raise DataError(f"no such price file: {file}") from exc
    except OSError as exc:
        raise MalformedData(f"cannot read {file} as a CSV of daily prices: {exc}") from exc
    name = ticker or ticker_from_path(file)
    parsed = _parsed_file(str(file), stat.st_mtime_ns, stat.st_size, name)
    return dataclasses.replace(parsed, bars=parsed.bars.copy(deep=False))


@lru_cache(maxsize=256)
def _parsed_file(path: str, mtime_ns: int, size: int, ticker: str) -> PriceSeries:
    """The file as it stood at ``mtime_ns`` and ``size`` (the key: a rewritten file is parsed again)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DataError(f"no such price file: {file}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedData(f"cannot read {file} as a CSV of daily prices: {exc}") from exc
    return parse_price_csv(text, ticker=ticker, source_label=file.name, path=file)


def ticker_from_path(path: Path) -> str:
    """``AAPL_2012-2017_stocknet.csv`` and ``SPY.csv`` name AAPL and SPY."""
    return path.name.split("_", 1)[0].split(".", 1)[0].upper()


def _listing(folder: Path) -> tuple[str, ...]:
    """The folder's file names, sorted; none where it is not a folder. Listed once per process while the
    folder stays as it is (its modification time moves when a file is added, removed or renamed): a screen
    looks up some ninety symbols in two folders, and four globs a symbol took 60 ms of its path."""
    try:
        changed = folder.stat().st_mtime_ns
    except OSError:
        return ()
    return _listed(str(folder), changed)


@lru_cache(maxsize=64)
def _listed(folder: str, changed_ns: int) -> tuple[str, ...]:
    try:
        return tuple(sorted(entry.name for entry in os.scandir(folder) if entry.is_file()))
    except OSError:
        return ()


class PriceSource(Protocol):
    def series(self, ticker: str) -> PriceSeries: ...


class PriceFolders:
    """Daily price files in several folders, searched in order: the first folder with ``{TICKER}_*.csv`` or
    ``{TICKER}.csv`` answers (its largest such file), so a strategy's own folder is read before the bundled
    ones."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = tuple(folders)

    def path_for(self, ticker: str) -> Path:
        symbol = ticker.strip().upper()
        for folder in self.folders:
            found = [
                folder / name
                for name in _listing(folder)
                if name.endswith(".csv") and (name.startswith(f"{symbol}_") or name == f"{symbol}.csv")
            ]
            if symbol and found:
                return max(found, key=lambda path: path.stat().st_size)
        where = ", ".join(str(folder) for folder in self.folders)
        raise UnknownTicker(f"no daily prices for {symbol or ticker!r} in {where}")

    def series(self, ticker: str) -> PriceSeries:
        return load_price_csv(self.path_for(ticker), ticker=ticker.strip().upper())


class SnapshotPriceSource(PriceFolders):
    """Files under ``root/prices/daily/``: ``{TICKER}_*.csv`` or ``{TICKER}.csv`` (the largest file wins)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "prices" / "daily"
        super().__init__([self.folder])


class LivePriceSource:
    """Stooq's free daily CSV (``Date,Open,High,Low,Close,Volume``) through ``fetch`` (in production an
    ``http_fetcher`` limited to ``STOOQ_HOSTS`` and ``STOOQ_MAX_BYTES``).

    Stooq sends no adjusted close, so ``adj_close`` is its close. A bar dated today (New York) fetched
    before the 16:00 close is dropped whatever its volume: here the clock knows what a file cannot.
    """

    def __init__(self, fetch: Fetcher, *, now: Callable[[], datetime] | None = None) -> None:
        self._fetch = fetch
        self._now = now or (lambda: datetime.now(tz=NEW_YORK))

    def series(self, ticker: str) -> PriceSeries:
        symbol = ticker.strip().upper()
        url = STOOQ_URL.format(symbol=symbol.lower())
        try:
            body = self._fetch(url).decode("utf-8", errors="replace")
        except FetchError as exc:
            raise DataError(f"the price provider did not answer for {symbol}: {exc}") from exc
        first_line = body.strip().split("\n", 1)[0].strip()
        if not first_line or first_line.lower().startswith("no data"):
            raise UnknownTicker(f"the price provider has no daily prices for {symbol!r}")
        if not first_line.lower().startswith("date,"):
            raise MalformedData(f"the price provider sent no daily prices for {symbol}: {first_line[:80]!r}")
        return self._without_open_session(parse_price_csv(body, ticker=symbol, source_label=url))

    def _without_open_session(self, series: PriceSeries) -> PriceSeries:
        now = self._now().astimezone(NEW_YORK)
        if series.last_date < now.date() or now.time() >= SESSION_CLOSE or len(series.bars) < 2:
            return series
        return dataclasses.replace(series, bars=series.bars.iloc[:-1], dropped_partial_bar=series.last_date)
