"""The news analyst's searcher reads the desk's documents once per window: a screen's queries share two or
three windows, and each query had read up to 500 rows of its own."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.screen.search import Query
from memos.models import SourceDocument
from memos.pipeline.screen.searcher import DeskSearcher, _ReadOnce

pytestmark = pytest.mark.django_db

WEEK = (date(2015, 6, 22), date(2015, 6, 26))


def _news(doc_id: str, title: str, tickers: list[str], day: date) -> None:
    SourceDocument.objects.create(
        doc_id=doc_id,
        kind="news",
        title=title,
        url="https://example.com/" + doc_id,
        published=day,
        source="a wire",
        text=title,
        tickers=tickers,
    )


def _query(symbols: tuple[str, ...], words: tuple[str, ...], window: tuple[date, date]) -> Query:
    start, end = window
    return Query(
        kind="news",
        text="t",
        terms="",
        sector="Technology",
        symbols=symbols,
        words=words,
        start=start,
        end=end,
        limit=10,
    )


def test_queries_of_one_window_read_the_documents_once_and_each_finds_its_own() -> None:
    _news("news:1", "Apple ships a new phone", ["AAPL"], date(2015, 6, 23))
    _news("news:2", "Oil majors cut spending", ["XOM"], date(2015, 6, 24))
    _news("news:3", "Chip demand cools across the industry", [], date(2015, 6, 25))
    _news("news:4", "Apple before the window", ["AAPL"], date(2015, 6, 1))
    searcher = DeskSearcher()
    with CaptureQueriesContext(connection) as read:
        apple = searcher.answer(_query(("AAPL",), ("chip",), WEEK))
        oil = searcher.answer(_query(("XOM",), (), WEEK))
    selects = [
        q["sql"] for q in read.captured_queries if "memos_sourcedocument" in q["sql"] and "SELECT" in q["sql"]
    ]
    assert len(selects) == 1
    assert [doc.doc_id for doc in apple.documents] == ["news:3", "news:1"]  # newest first; a word matched
    assert [doc.doc_id for doc in oil.documents] == ["news:2"]
    earlier = searcher.answer(_query(("AAPL",), (), (date(2015, 6, 1), date(2015, 6, 5))))
    assert [doc.doc_id for doc in earlier.documents] == ["news:4"]  # another window is read for itself


def test_threads_asking_for_one_window_at_once_wait_for_one_read_and_a_failed_read_is_tried_again() -> None:
    """The sectors' readings start together and share their windows: each used to find the window unread
    and read it again (14 reads of the desk's documents for 3 windows)."""
    once: _ReadOnce[str, list[int]] = _ReadOnce()
    reads: list[str] = []
    gate = threading.Barrier(8)

    def read() -> list[int]:
        reads.append("read")
        time.sleep(0.05)  # the others arrive while it reads
        return [1, 2]

    def ask() -> list[int]:
        gate.wait()
        return once.get("week", read)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: ask(), range(8)))
    assert reads == ["read"] and answers == [[1, 2]] * 8

    def failing() -> list[int]:
        raise OSError("the database went away")

    with pytest.raises(OSError):
        once.get("another week", failing)
    assert once.get("another week", read) == [1, 2] and len(reads) == 2
