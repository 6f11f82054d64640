"""The configured data sources: the bundled snapshot (``DATA_MODE=snapshot``, the default) or live SEC."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from agents.data.edgar import EdgarSource, LiveEdgarSource, SnapshotEdgarSource
from agents.data.http import http_fetcher


def edgar_source(data_dir: Path | None = None) -> EdgarSource:
    """``data_dir`` forces a snapshot folder; otherwise ``DATA_MODE`` decides."""
    if data_dir is not None:
        return SnapshotEdgarSource(data_dir)
    if settings.DATA_MODE == "live":
        fetch = http_fetcher(
            user_agent=settings.SEC_USER_AGENT, per_second=settings.SEC_MAX_REQUESTS_PER_SECOND
        )
        return LiveEdgarSource(fetch)
    return SnapshotEdgarSource(Path(settings.SNAPSHOT_DIR))
