"""SEC's answers kept byte for byte (seed 001 T1: "cache raw"): every live EDGAR fetch is stored before it
is read, gzip-packed, once per URL and content, so a figure in the fact store can be derived again from what
SEC sent (``raw_source``), and a restatement shows as two answers to one URL.

Kept within bounds (issue 31, L10): the newest ``RAW_RESPONSES_PER_URL`` answers to each URL (a restatement
and the answers before it), never more, so a desk that refreshes every day does not grow without end."""

from __future__ import annotations

import gzip
import hashlib
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.data.edgar.sources import (
    COMPANYFACTS_URL,
    SUBMISSIONS_URL,
    TICKERS_URL,
    DocumentUnavailable,
    decode_json,
    parse_company_tickers,
)
from memos.models import RawResponse


def keep_raw(url: str, raw: bytes) -> None:
    """Store ``raw`` as the answer to ``url``; an answer seen before only moves its ``last_seen_at``."""
    digest = hashlib.sha256(raw).hexdigest()
    now = timezone.now()
    if RawResponse.objects.filter(url=url, sha256=digest).update(last_seen_at=now):
        return
    try:
        with transaction.atomic():
            RawResponse.objects.create(
                url=url,
                sha256=digest,
                size=len(raw),
                body=gzip.compress(raw, mtime=0),
                fetched_at=now,
                last_seen_at=now,
            )
    except IntegrityError:  # another process kept the same answer a moment ago
        RawResponse.objects.filter(url=url, sha256=digest).update(last_seen_at=now)
        return
    prune(url)


def prune(url: str) -> int:
    """Drop the answers to ``url`` older than its newest ``RAW_RESPONSES_PER_URL``; how many went."""
    kept = max(settings.RAW_RESPONSES_PER_URL, 1)  # the newest answer is what a refresh reads again
    newest = RawResponse.objects.filter(url=url).order_by("-fetched_at", "-pk").values_list("pk", flat=True)
    dropped, _ = RawResponse.objects.filter(url=url).exclude(pk__in=list(newest[:kept])).delete()
    return dropped


def latest_raw(url: str) -> bytes:
    """The newest answer kept for ``url``, unpacked; DocumentUnavailable when none was kept."""
    row = RawResponse.objects.filter(url=url).order_by("-fetched_at", "-pk").first()
    if row is None:
        raise DocumentUnavailable(f"no answer from SEC to {url} was kept")
    return gzip.decompress(bytes(row.body))


class KeptEdgarSource:
    """An EDGAR source that answers from the kept raw responses alone: what a live refresh last read, read
    again without the network (agents.data.edgar.EdgarSource)."""

    def company_tickers(self) -> dict[str, tuple[int, str]]:
        return parse_company_tickers(decode_json(latest_raw(TICKERS_URL), what=TICKERS_URL), what=TICKERS_URL)

    def companyfacts(self, cik: int) -> dict[str, Any]:
        url = COMPANYFACTS_URL.format(cik=cik)
        return _object(url)

    def submissions(self, cik: int) -> dict[str, Any]:
        url = SUBMISSIONS_URL.format(cik=cik)
        return _object(url)


def _object(url: str) -> dict[str, Any]:
    found = decode_json(latest_raw(url), what=url)
    if not isinstance(found, dict):
        raise DocumentUnavailable(f"the kept answer to {url} is not a JSON object")
    return found
