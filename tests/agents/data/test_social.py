"""The bundled stocknet tweets as social posts: untrusted text, dated, deduplicated, newest first."""

from __future__ import annotations

import tarfile
from datetime import date
from pathlib import Path

import pytest

from agents.data.errors import MalformedData
from agents.data.social import StocknetSocialSource, post_text
from tests.agents.data import SNAPSHOT

SOURCE = StocknetSocialSource(SNAPSHOT / "stocknet")


def test_posts_are_the_newest_distinct_ones_about_the_symbol_with_their_day() -> None:
    posts = SOURCE.posts("AAPL", limit=5)
    assert len(posts) == 5
    days = [p.published for p in posts if p.published is not None]
    assert len(days) == 5 and days == sorted(days, reverse=True)
    assert posts[0].published == date(2015, 12, 31)  # the set ends with 2015
    assert len({p.text for p in posts}) == 5 and len({p.doc_id for p in posts}) == 5
    assert all(
        p.kind == "social" and p.doc_id.startswith("social:") and p.tickers == ("AAPL",) for p in posts
    )
    assert all("$aapl" in p.text for p in posts)  # "$ aapl" glued back


def test_a_window_ends_the_posts_at_its_day_and_an_unknown_symbol_has_none() -> None:
    early = SOURCE.posts("AAPL", until=date(2014, 6, 30), limit=3)
    assert len(early) == 3 and all(p.published and p.published <= date(2014, 6, 30) for p in early)
    assert SOURCE.posts("NOPE") == []
    assert "AAPL" in SOURCE.symbols() and len(SOURCE.symbols()) == 87


def test_tokens_read_as_a_line() -> None:
    assert post_text(["$", "aapl", "up", "today", "!", "URL"]) == "$aapl up today! URL"


def test_a_malformed_post_names_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "tweets"
    folder.mkdir()
    day = tmp_path / "AAPL" / "2015-01-02"
    day.parent.mkdir()
    day.write_text('{"text": "not tokens"}\n')
    with tarfile.open(folder / "AAPL.tar.gz", "w:gz") as archive:
        archive.add(day, arcname="AAPL/2015-01-02")
    with pytest.raises(MalformedData, match=r"AAPL\.tar\.gz"):
        StocknetSocialSource(tmp_path).posts("AAPL")
