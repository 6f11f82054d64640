"""The news analyst's searcher reads the desk's documents once per window: a screen's queries share two or
three windows, and each query had read up to 500 rows of its own."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.screen.search import Query
from memos.models import SourceDocument
from memos.pipeline.screen.searcher import DeskSearcher

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
