"""The news analyst's searcher: each query of the plan (agents.screen.search) answered from the desk's
documents (news and prediction markets in the fact store) and the bundled stocknet posts, dated within the
query's window and never after the as-of session; in live mode, first from the configured search API.
Deterministic over the desk's own documents: the same query finds the same documents in the same order, so
an unchanged rerun sends the same prompts and the ledger answers them.

Promotion and spam (agents.text.promotion: stock-pick services, gain boasts, quote-page bots) is left out
before a query's limit is applied, so it neither reaches the model nor takes a real post's place; the answer
names what was left out and why, and the news reading says so.

Posts and search results found are stored as documents (memos.pipeline.fact_store.save_documents), so every
citation of one resolves to a row, as a news item's does.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import chain, zip_longest
from typing import Generic, TypeVar

from agents.data.errors import DataError
from agents.data.news import LiveSearch
from agents.data.types import SourceDocument
from agents.screen.evidence import may_be_about
from agents.screen.search import Query
from agents.text.promotion import Verdict, read
from memos.models import SourceDocument as SourceDocumentRow
from memos.pipeline.data_sources import social_source
from memos.pipeline.fact_store import save_documents

POSTS_READ = 40  # the newest posts read per symbol up to the as-of session (the month before it, mostly)
# A post naming more tickers than this is a list ("$lly $exc $low $tgt ..."), not news about one of them.
MOST_CASHTAGS = 3
_CASHTAG = re.compile(r"\$[a-z][a-z.\-]*")
DESK_KINDS = ("news", "prediction-market", "filing")
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class Answer:
    documents: list[SourceDocument]
    failed: str  # why the search API did not answer, or ""
    # What the query matched that code left out as promotion or spam, each with what gave it away.
    promotional: tuple[tuple[SourceDocument, Verdict], ...] = ()


class DeskSearcher:
    """``live``: the configured search API (live mode), asked for each query with terms, before the desk's
    own documents; what it finds is stored as documents like any other."""

    def __init__(self, live: LiveSearch | None = None) -> None:
        self._posts: _ReadOnce[tuple[str, date, date], list[SourceDocument]] = _ReadOnce()
        self._windows: _ReadOnce[tuple[date, date], list[tuple[SourceDocument, str]]] = _ReadOnce()
        self._live = live

    def answer(self, query: Query) -> Answer:
        """The query's documents; a search API that fails (an outage, a refusal) leaves the desk's own
        documents to answer, and says why (issue 31: an outage failed the whole screen)."""
        try:
            searched = self._searched(query)
            failed = ""
        except DataError as exc:
            searched, failed = [], f"search API failed: {exc}"
        if query.kind == "market":
            found = _matching(self._desk(query, symbols=()), query.words)
        elif query.kind == "posts":
            found = _matching(self._symbol_posts(query), query.words)
        elif query.kind == "news":
            found = self._desk(query, symbols=query.symbols, words=query.words)
        else:  # the deep dive: the movers' own posts and news over the longer window
            found = list(chain(self._desk(query, symbols=query.symbols), self._symbol_posts(query)))
        kept, promotional = _screened(_distinct([*searched, *found]))
        chosen = kept[: query.limit]
        save_documents(doc for doc in chosen if doc.kind == "social" or doc in searched)
        return Answer(chosen, failed, promotional)

    def _searched(self, query: Query) -> list[SourceDocument]:
        if self._live is None or not query.terms:
            return []
        return self._live.search(
            query.terms, since=query.start, until=query.end, tickers=tuple(query.symbols)
        )[: query.limit]

    def _symbol_posts(self, query: Query) -> list[SourceDocument]:
        """The symbols' posts in the window, taken in turn (newest first for each), so one busy symbol does
        not crowd out its sector. A promotion takes no symbol's turn: each symbol's first post in the
        turns is its first real one (the promotions follow, for the answer to count and leave out)."""
        lists = []
        for symbol in query.symbols:
            # A post in a symbol's file whose cashtag is part of a word ("l $d", a song, in D's file).
            posts = [
                p
                for p in self._posts_of(symbol, query.start, query.end)
                if _within(p.published, query) and _about_few(p) and may_be_about(p.text, symbol)
            ]
            kept, spam = _screened(posts)
            lists.append([*kept, *(doc for doc, _ in spam)])
        return [post for turn in zip_longest(*lists) for post in turn if post is not None]

    def _posts_of(self, symbol: str, start: date, end: date) -> list[SourceDocument]:
        """The symbol's newest posts of the window (``POSTS_READ`` at most), without reading an archive that
        ends before it."""
        return self._posts.get(
            (symbol, start, end),
            lambda: social_source().posts(symbol, since=start, until=end, limit=POSTS_READ),
        )

    def _desk(
        self, query: Query, *, symbols: Sequence[str], words: Sequence[str] = ()
    ) -> list[SourceDocument]:
        found = []
        for doc, text in self._desk_window(query.start, query.end):
            about = bool(set(doc.tickers) & set(symbols))
            if symbols and not about and not any(word in text for word in words):
                continue
            found.append(doc)
        return found

    def _desk_window(self, start: date, end: date) -> list[tuple[SourceDocument, str]]:
        """The desk's documents of the window, newest first, each with its title and text lower-cased:
        read once per window (a screen's queries share two or three), not once per query. A search API's
        result stored meanwhile is found by the query that searched it, not by this read."""
        return self._windows.get((start, end), lambda: _read_window(start, end))


def _read_window(start: date, end: date) -> list[tuple[SourceDocument, str]]:
    rows = SourceDocumentRow.objects.filter(
        kind__in=DESK_KINDS, published__gte=start, published__lte=end
    ).order_by("-published", "doc_id")
    return [
        (
            SourceDocument(
                doc_id=row.doc_id,
                kind=row.kind,
                title=row.title,
                url=row.url,
                published=row.published,
                source=row.source,
                text=row.text,
                tickers=tuple(row.tickers),
            ),
            f"{row.title} {row.text}".lower(),
        )
        for row in rows[:500]
    ]


class _ReadOnce(Generic[K, V]):
    """Values read once per key, however many of the stage's threads ask at the same moment: the sectors'
    readings start together and share their windows, and a check-then-read let each of them read the same
    window again (14 reads of the desk's documents for 3 windows)."""

    def __init__(self) -> None:
        self._values: dict[K, V] = {}
        self._locks: dict[K, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: K, read: Callable[[], V]) -> V:
        with self._lock:
            if key in self._values:
                return self._values[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # the first asker reads; the others wait for its value, not for the database
            with self._lock:
                if key in self._values:
                    return self._values[key]
            value = read()  # a read that fails leaves the key unread: the next asker tries again
            with self._lock:
                self._values[key] = value
            return value


def _screened(
    documents: Iterable[SourceDocument],
) -> tuple[list[SourceDocument], tuple[tuple[SourceDocument, Verdict], ...]]:
    """The documents that are not promotion, in order, and those that are, with their verdicts."""
    kept: list[SourceDocument] = []
    spam: list[tuple[SourceDocument, Verdict]] = []
    for doc in documents:
        verdict = read(f"{doc.title} {doc.text}")
        if verdict.promotional:
            spam.append((doc, verdict))
        else:
            kept.append(doc)
    return kept, tuple(spam)


def _about_few(post: SourceDocument) -> bool:
    return len(_CASHTAG.findall(post.text.lower())) <= MOST_CASHTAGS


def _within(published: date | None, query: Query) -> bool:
    return published is not None and query.start <= published <= query.end


def _matching(documents: Iterable[SourceDocument], words: Sequence[str]) -> list[SourceDocument]:
    if not words:
        return list(documents)
    return [doc for doc in documents if any(word in f"{doc.title} {doc.text}".lower() for word in words)]


def _distinct(documents: Iterable[SourceDocument]) -> list[SourceDocument]:
    seen: set[str] = set()
    kept = []
    for doc in documents:
        if doc.doc_id not in seen:
            seen.add(doc.doc_id)
            kept.append(doc)
    return kept
