"""The configured data sources: the bundled snapshot (``DATA_MODE=snapshot``, the default) or live SEC; the
bundled social posts and the constituents list behind a company's competitors."""

from __future__ import annotations

from contextlib import suppress
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.db import connection

from agents.data.edgar import EdgarSource, LiveEdgarSource, SnapshotEdgarSource
from agents.data.edgar.sources import EDGAR_HOSTS, EDGAR_MAX_BYTES
from agents.data.errors import DataError
from agents.data.http import Fetcher, FetchError, http_fetcher
from agents.data.news import NEWS_MAX_BYTES, LiveSearch, feed_hosts
from agents.data.prices import STOOQ_HOSTS, STOOQ_MAX_BYTES, LivePriceSource, load_price_csv
from agents.data.shared_rate import SharedRateLimiter
from agents.data.social import StocknetSocialSource, read_archives
from memos.pipeline.raw_responses import keep_raw
from memos.redis_client import redis_client

SEC_LIMIT_KEY = "analyst-desk:sec-next-slot"


def sec_limiter() -> SharedRateLimiter:
    """SEC's fair-access limit, one for every process of the desk (its slots in Redis)."""
    return SharedRateLimiter(redis_client(), settings.SEC_MAX_REQUESTS_PER_SECOND, key=SEC_LIMIT_KEY)


def edgar_source(data_dir: Path | None = None) -> EdgarSource:
    """``data_dir`` forces a snapshot folder; otherwise ``DATA_MODE`` decides."""
    if data_dir is not None:
        return snapshot_source(data_dir)
    if settings.DATA_MODE == "live":
        fetch = http_fetcher(
            user_agent=settings.SEC_USER_AGENT,
            per_second=settings.SEC_MAX_REQUESTS_PER_SECOND,
            allowed_hosts=EDGAR_HOSTS,
            max_bytes=EDGAR_MAX_BYTES,
            limiter=sec_limiter(),
        )
        return LiveEdgarSource(outside_transactions(fetch), max_bytes=EDGAR_MAX_BYTES, keep=keep_raw)
    return snapshot_source(Path(settings.SNAPSHOT_DIR))


@lru_cache(maxsize=8)
def snapshot_source(root: Path) -> SnapshotEdgarSource:
    """One source per snapshot folder and process: the bundled files do not change while it runs, and the
    ticker list (10,000 companies) is parsed once, not on every brief form that names an unknown ticker."""
    return SnapshotEdgarSource(root)


def live_price_source() -> LivePriceSource:
    """Daily prices from the live provider, over HTTPS to its hosts only, outside any transaction."""
    fetch = http_fetcher(
        user_agent=settings.DESK_USER_AGENT,
        per_second=1.0,
        allowed_hosts=STOOQ_HOSTS,
        max_bytes=STOOQ_MAX_BYTES,
    )
    return LivePriceSource(outside_transactions(fetch))


def live_search() -> LiveSearch | None:
    """The configured news search API (``SCREEN_SEARCH_URL``, live mode only), or None."""
    template = settings.SCREEN_SEARCH_URL
    if not template:
        return None
    key = settings.SCREEN_SEARCH_KEY
    fetch = http_fetcher(
        user_agent=settings.DESK_USER_AGENT,
        per_second=1.0,
        allowed_hosts=feed_hosts(template.replace("{query}", "")),
        max_bytes=NEWS_MAX_BYTES,
        headers={settings.SCREEN_SEARCH_KEY_HEADER: key} if key else None,
    )
    return LiveSearch(outside_transactions(fetch), template)


def social_source() -> StocknetSocialSource:
    """Social posts: the bundled stocknet tweets in either data mode (no live social feed is configured)."""
    return StocknetSocialSource(Path(settings.SNAPSHOT_DIR) / "stocknet")


def snapshot_price_folders(root: Path) -> list[Path]:
    """The bundled daily prices, in the order they are searched: the snapshot's own, then stocknet's."""
    return [root / "prices" / "daily", root / "stocknet" / "price"]


def warm_prices() -> None:
    """Parse the bundled price files now, in a worker before it forks: each work-horse inherits them parsed
    (agents.data.prices keeps them per process; 94 files, 0.4 s and 13 MB once), where every screen parsed
    some ninety of them (0.8 s) on its path. A file that cannot be read is left for the run that needs it
    to say so."""
    for folder in snapshot_price_folders(Path(settings.SNAPSHOT_DIR)):
        for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
            with suppress(DataError):
                load_price_csv(path)


def warm_posts() -> None:
    """Read the bundled posts archives now, in a worker before it forks: each work-horse inherits their days
    (agents.data.social.read_archives: 26 MB once, read in the 0.2 s the worker already spent noting each
    archive's newest day), and a week after the posts end reads none of them."""
    read_archives(social_source().root)


def constituents_file() -> Path:
    """The S&P 500 constituents list, whose GICS sub-industries name a company's competitors."""
    return Path(settings.SNAPSHOT_DIR) / "reference" / "sp500_constituents.csv"


def outside_transactions(fetch: Fetcher) -> Fetcher:
    """``fetch``, refused while the default database connection is inside an atomic block.

    A fetch may take its whole deadline; inside a transaction that time holds the transaction open, and
    with it every row lock taken so far. Fetch first, then open the transaction to write what came back.
    """

    def guarded(url: str) -> bytes:
        if in_transaction():
            raise FetchError(
                f"refusing {url}: a network fetch inside a database transaction would hold it open; "
                "fetch before transaction.atomic()"
            )
        return fetch(url)

    return guarded


def in_transaction() -> bool:
    """Whether the code running now opened an atomic block on the default connection.

    The blocks a TestCase opens to roll each test back are not the application's; Django's own check for
    ``atomic(durable=True)`` skips them the same way (``Atomic._from_testcase``).
    """
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)
