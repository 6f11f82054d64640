"""Helpers every SourceDocument adapter shares: stable ids, reading JSON files, date windows.

A document id is ``<prefix>:<16 hex of sha256(key)>``. The key is the document's canonical URL when it has one
(the same article read from two feeds gets one id), otherwise what identifies it in its source. Ids depend on
nothing but the key, so they are the same on every load and on every machine.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from agents.data.errors import MalformedData
from agents.data.types import SourceDocument

ID_HEX_CHARS = 16


def document_id(prefix: str, key: str) -> str:
    """``prefix:`` and the first 16 hex characters of the key's SHA-256."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return f"{prefix}:{digest[:ID_HEX_CHARS]}"


def canonical_url(url: str) -> str:
    """The URL with surrounding spaces and the fragment dropped and the scheme and host lower-cased.

    The path and query keep their case: servers may treat them as case-sensitive.
    """
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def news_document_id(*, url: str, source: str, title: str, published: date | None) -> str:
    """``news:<hash>`` of the canonical URL, or of source, title and date for an item without a URL."""
    if url.strip():
        return document_id("news", canonical_url(url))
    day = published.isoformat() if published else ""
    return document_id("news", f"{source}\n{title}\n{day}")


def host_of(url: str) -> str:
    """The host a URL names, without a leading ``www.`` (``https://www.nasdaq.com/x`` -> ``nasdaq.com``)."""
    host = urlsplit(url.strip()).netloc.lower()
    return host.removeprefix("www.")


def mention_pattern(ticker: str, names: Sequence[str] = ()) -> re.Pattern[str]:
    """The ticker or one of its ``names`` as a whole word, with its case as written: "Apple" the company is
    capitalised, and lower-case "apple" or "delta" is more often something else."""
    words = (ticker, *names)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(word) for word in words) + r")(?!\w)")


def tickers_mentioned(text: str, names: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The tickers of ``names`` (in its order) that ``text`` mentions by symbol or by one of their names."""
    return tuple(ticker for ticker, aliases in names.items() if mention_pattern(ticker, aliases).search(text))


def within(
    documents: Iterable[SourceDocument], *, since: date | None = None, until: date | None = None
) -> list[SourceDocument]:
    """Documents published on or after ``since`` and on or before ``until``.

    With either bound given, an undated document is left out: nobody can say it falls inside the window.
    """
    if since is None and until is None:
        return list(documents)
    return [
        doc
        for doc in documents
        if doc.published is not None
        and (since is None or doc.published >= since)
        and (until is None or doc.published <= until)
    ]


def unique_by_id(documents: Iterable[SourceDocument]) -> list[SourceDocument]:
    """The first document for each id, in the order given (feeds repeat items across pages)."""
    seen: dict[str, SourceDocument] = {}
    for doc in documents:
        seen.setdefault(doc.doc_id, doc)
    return list(seen.values())


def read_json(path: Path) -> object:
    """The parsed JSON in ``path``; a missing or unparsable file is MalformedData naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MalformedData(f"{path} could not be read: {exc.strerror or exc}") from exc
    try:
        parsed: object = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedData(f"{path} is not valid JSON: {exc}") from exc
    return parsed


def describe_validation(exc: ValidationError) -> str:
    """A pydantic error as one line: ``field.path: message; ...`` (without the input, which may be huge)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}" for error in exc.errors()
    )


def newest_first(documents: Iterable[SourceDocument]) -> list[SourceDocument]:
    """Newest day first, undated last; within a day the input order (feeds list newest first) is kept."""
    return sorted(documents, key=lambda doc: doc.published or date.min, reverse=True)
