"""Daily price bars from the files as they really are, and from a live provider, as one ``PriceSeries``.

Quirks handled (see ``../shared/data/PROVENANCE.md``): Yahoo headers (``Adj Close``, or ``Adj close``),
lower-case headers, an unnamed leading index column, float volumes, ``+00:00`` on dates, columns in any
order, newest-first files (``timestamp,open,...``), no volume column (VIX), and an intraday partial bar as the
last row of a download.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from agents.data.errors import DataError, MalformedData, UnknownTicker
from agents.data.http import Fetcher, FetchError

COLUMNS = ("open", "high", "low", "close", "adj_close", "volume")
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
# A download taken while the market is open ends with an intraday bar whose "close" is not a close. Three
# signs give it away, and any one drops it, each judged against the previous 20 sessions of the same file:
# volume well under their median (SPY 2025-01-07: 27.2 M against ~48 M); a close off the cent grid all of
# theirs sit on (XLK 2025-01-07 "closed" at 233.161697; official closes are whole cents); a volume that is
# not a whole number of 100-share lots when all of theirs are (XLY 2025-01-07: 2,128,836), the signature of a
# running intraday count in files whose finished days are reported in lots.
PARTIAL_BAR_VOLUME_SHARE = 0.6
PARTIAL_BAR_LOOKBACK = 20
CENT_TOLERANCE = 1e-3  # of a cent: float noise in files (97.279999 is 97.28)
STOOQ_URL = "https://stooq.com/q/d/l/?s={symbol}.us&i=d"


@dataclass(frozen=True)
class PriceSeries:
    """Ascending daily bars indexed by ``date`` (datetime64), float columns ``COLUMNS``.

    ``adj_close`` equals ``close`` where the file has no adjusted close; ``volume`` is NaN where it has none.
    """

    ticker: str
    bars: pd.DataFrame
    source_label: str
    dropped_partial_bar: date | None = None

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
        bars = self.bars.loc[self.bars.index <= pd.Timestamp(as_of)]
        return PriceSeries(self.ticker, bars, self.source_label, self.dropped_partial_bar)


def _to_date(value: object) -> date:
    return pd.Timestamp(value).date()  # type: ignore[arg-type]


def parse_price_csv(text: str, *, ticker: str, source_label: str) -> PriceSeries:
    """Parse one CSV of daily bars; raises MalformedData naming ``source_label`` when it is not one."""
    try:
        raw = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise MalformedData(f"{source_label} is not a CSV of daily prices: {exc}") from exc
    renamed = {column: _ALIASES.get(str(column).strip().lower()) for column in raw.columns}
    frame = raw.rename(columns={k: v for k, v in renamed.items() if v}).loc[
        :, [v for v in renamed.values() if v]
    ]
    missing = {"date", "open", "high", "low", "close"} - set(frame.columns)
    if missing:
        raise MalformedData(
            f"{source_label} is not a CSV of daily prices: no {', '.join(sorted(missing))} column"
        )
    dates = pd.to_datetime(frame["date"].astype(str).str.slice(0, 10), format="%Y-%m-%d", errors="coerce")
    if dates.isna().any():
        bad = frame["date"][dates.isna()].iloc[0]
        raise MalformedData(f"{source_label} has a row with an unreadable date: {bad!r}")
    bars = pd.DataFrame(index=pd.DatetimeIndex(dates, name="date"))
    for column in COLUMNS:  # "close" comes before "adj_close", which falls back to it
        if column in frame.columns:
            bars[column] = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        elif column == "adj_close":
            bars[column] = bars["close"]
        else:
            bars[column] = np.nan
    if bars[["open", "high", "low", "close"]].isna().any().any():
        raise MalformedData(f"{source_label} has a row without a numeric open, high, low and close")
    if bars.index.has_duplicates:
        duplicate = bars.index[bars.index.duplicated()][0]
        raise MalformedData(f"{source_label} lists {duplicate.date()} twice")
    if bars.empty:
        raise MalformedData(f"{source_label} has no price rows")
    bars = bars.sort_index()
    bars, dropped = _drop_partial_last_bar(bars)
    return PriceSeries(
        ticker=ticker.upper(), bars=bars, source_label=source_label, dropped_partial_bar=dropped
    )


def _drop_partial_last_bar(bars: pd.DataFrame) -> tuple[pd.DataFrame, date | None]:
    if len(bars) <= PARTIAL_BAR_LOOKBACK:
        return bars, None
    previous = bars.iloc[-PARTIAL_BAR_LOOKBACK - 1 : -1]
    last = bars.iloc[-1]
    volume = float(previous["volume"].median())
    thin = bool(volume > 0 and last["volume"] < PARTIAL_BAR_VOLUME_SHARE * volume)
    off_grid = bool(_on_cent_grid(previous["close"]).all() and not _on_cent_grid(last[["close"]]).all())
    lots = previous["volume"].notna().all() and bool((previous["volume"] % 100 == 0).all())
    odd_volume = bool(lots and last["volume"] % 100 != 0)
    if thin or off_grid or odd_volume:
        return bars.iloc[:-1], _to_date(bars.index[-1])
    return bars, None


def _on_cent_grid(prices: pd.Series) -> pd.Series:
    cents = prices.to_numpy(dtype=float) * 100
    return pd.Series(np.abs(cents - np.round(cents)) < CENT_TOLERANCE, index=prices.index)


def load_price_csv(path: str | Path, *, ticker: str | None = None) -> PriceSeries:
    """A price file; the ticker defaults to the file name before its first ``_`` (``AAPL_2012-2017...``)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DataError(f"no such price file: {file}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedData(f"cannot read {file} as a CSV of daily prices: {exc}") from exc
    name = ticker or file.name.split("_", 1)[0].split(".", 1)[0]
    return parse_price_csv(text, ticker=name, source_label=file.name)


class PriceSource(Protocol):
    def series(self, ticker: str) -> PriceSeries: ...


class SnapshotPriceSource:
    """Files under ``root/prices/daily/``: ``{TICKER}_*.csv`` or ``{TICKER}.csv`` (the largest file wins)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "prices" / "daily"

    def path_for(self, ticker: str) -> Path:
        symbol = ticker.strip().upper()
        candidates = sorted(self.folder.glob(f"{symbol}_*.csv")) + sorted(self.folder.glob(f"{symbol}.csv"))
        if not symbol or not candidates:
            raise UnknownTicker(f"no daily prices for {symbol or ticker!r} in {self.folder}")
        return max(candidates, key=lambda path: path.stat().st_size)

    def series(self, ticker: str) -> PriceSeries:
        return load_price_csv(self.path_for(ticker), ticker=ticker.strip().upper())


class LivePriceSource:
    """Stooq's free daily CSV (``Date,Open,High,Low,Close,Volume``; unadjusted) through ``fetch``."""

    def __init__(self, fetch: Fetcher) -> None:
        self._fetch = fetch

    def series(self, ticker: str) -> PriceSeries:
        symbol = ticker.strip().lower()
        url = STOOQ_URL.format(symbol=symbol)
        try:
            body = self._fetch(url).decode("utf-8", errors="replace")
        except FetchError as exc:
            raise DataError(f"the price provider did not answer for {ticker.upper()}: {exc}") from exc
        if not body.strip() or body.strip().lower().startswith("no data"):
            raise UnknownTicker(f"the price provider has no daily prices for {ticker.upper()!r}")
        return parse_price_csv(body, ticker=ticker, source_label=url)
