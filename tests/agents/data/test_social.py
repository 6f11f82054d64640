"""The bundled stocknet tweets as social posts: untrusted text, dated, deduplicated, newest first."""

from __future__ import annotations

import gzip
import json
import tarfile
from datetime import date, datetime
from pathlib import Path

import pytest

from agents.data import social
from agents.data.errors import MalformedData
from agents.data.social import StocknetSocialSource, post_text, posted_at, read_archives
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


def _archive(root: Path, days: dict[str, str], *, format: int = tarfile.USTAR_FORMAT) -> Path:
    """A stocknet archive of AAPL holding ``days`` (day -> its lines), written by tarfile in ``format``."""
    folder = root / "tweets"
    folder.mkdir(exist_ok=True)
    path = folder / "AAPL.tar.gz"
    with tarfile.open(path, "w:gz", format=format) as archive:
        for day, text in days.items():
            file = root / "AAPL" / day
            file.parent.mkdir(exist_ok=True)
            file.write_text(text)
            archive.add(file, arcname=f"AAPL/{day}")
    return path


def _tweet(words: str, when: str) -> str:
    return json.dumps({"text": words.split(), "created_at": when, "user_id_str": "7"}) + "\n"


def test_an_archive_is_read_the_same_whatever_tar_format_wrote_it(tmp_path: Path) -> None:
    days = {
        "2015-01-02": _tweet(
            "$ aapl shipped more phones than anyone expected", "Fri Jan 02 10:00:00 +0000 2015"
        ),
        "2015-01-05": _tweet(
            "$ aapl the watch launch date is set for april", "Mon Jan 05 10:00:00 +0000 2015"
        ),
    }
    read = []
    for number, format in enumerate((tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT)):
        root = tmp_path / str(number)
        root.mkdir()
        _archive(root, days, format=format)
        read.append([(post.published, post.text) for post in StocknetSocialSource(root).posts("AAPL")])
    assert read[0] == read[1] == read[2]
    assert [day for day, _ in read[0]] == [date(2015, 1, 5), date(2015, 1, 2)]  # newest first


def test_a_damaged_or_cut_archive_is_refused_with_its_name(tmp_path: Path) -> None:
    line = _tweet("$ aapl services revenue grew again this quarter", "Fri Jan 02 10:00:00 +0000 2015")
    path = _archive(tmp_path, {"2015-01-02": line})
    data = bytearray(gzip.decompress(path.read_bytes()))
    data[0:4] = b"XXXX"  # the first header's name: its checksum no longer matches
    path.write_bytes(gzip.compress(bytes(data)))
    with pytest.raises(MalformedData, match=r"AAPL\.tar\.gz.*damaged header"):
        StocknetSocialSource(tmp_path).posts("AAPL")
    path.write_bytes(
        gzip.compress(gzip.decompress(_archive(tmp_path, {"2015-01-02": line}).read_bytes())[:560])
    )
    with pytest.raises(MalformedData, match=r"AAPL\.tar\.gz.*cut short"):
        StocknetSocialSource(tmp_path).posts("AAPL")
    path.write_bytes(b"not gzip at all")
    with pytest.raises(MalformedData, match=r"AAPL\.tar\.gz"):
        StocknetSocialSource(tmp_path).posts("AAPL")


def test_an_archive_replaced_on_disk_is_read_again(tmp_path: Path) -> None:
    first = _tweet("$ aapl the first version of this day's file", "Fri Jan 02 10:00:00 +0000 2015")
    _archive(tmp_path, {"2015-01-02": first})
    assert "first version" in StocknetSocialSource(tmp_path).posts("AAPL")[0].text
    second = _tweet("$ aapl the second version of this day's file, longer", "Fri Jan 02 11:00:00 +0000 2015")
    _archive(tmp_path, {"2015-01-02": second})
    assert "second version" in StocknetSocialSource(tmp_path).posts("AAPL")[0].text


def test_a_tweets_time_reads_as_strptime_reads_it_and_anything_else_is_refused() -> None:
    for text in (
        "Fri Jan 02 10:00:00 +0000 2015",
        "Thu Dec 31 23:59:59 -0530 2015",
        "Mon Feb 09 00:00:01 +0900 2015",
    ):
        assert posted_at(text) == datetime.strptime(text, "%a %b %d %H:%M:%S %z %Y")
        assert posted_at(text).utcoffset() == datetime.strptime(text, "%a %b %d %H:%M:%S %z %Y").utcoffset()
    for bad in (
        "Fri Jan 02 10:00:00 +0000",
        "Fri Jan 32 10:00:00 +0000 2015",
        "Fri Foo 02 10:00:00 +0000 2015",
        "Fri Jan 02 10:00 +0000 2015",
        "Fri Jan 02 10:00:00 0000 2015",
        "2015-01-02T10:00:00Z",
    ):
        with pytest.raises(ValueError):
            posted_at(bad)


def test_a_day_file_named_past_a_tar_headers_name_field_is_still_found(tmp_path: Path) -> None:
    symbol = "A" * 95  # "AAA.../2015-01-02" is 106 bytes: POSIX tar puts the folder in its prefix field
    (tmp_path / "tweets").mkdir()
    day = tmp_path / "day"
    day.write_text(
        _tweet(f"$ {symbol.lower()} a post about a symbol with a long name", "Fri Jan 02 10:00:00 +0000 2015")
    )
    with tarfile.open(
        tmp_path / "tweets" / f"{symbol}.tar.gz", "w:gz", format=tarfile.USTAR_FORMAT
    ) as archive:
        archive.add(day, arcname=f"{symbol}/2015-01-02")
    [post] = StocknetSocialSource(tmp_path).posts(symbol)
    assert post.published == date(2015, 1, 2)


def test_posts_since_a_day_are_the_newest_posts_kept_where_they_fall_on_or_after_it() -> None:
    since, until = date(2015, 8, 14), date(2015, 8, 21)
    for symbol in ("AAPL", "XOM", "GE"):
        windowed = SOURCE.posts(symbol, since=since, until=until, limit=40)
        newest = SOURCE.posts(symbol, until=until, limit=40)
        assert windowed == [p for p in newest if p.published and p.published >= since]
        assert windowed and all(p.published and since <= p.published <= until for p in windowed)


def _read_ahead(folder: Path) -> StocknetSocialSource:
    """One archive of one post (2015-01-02), read ahead as a worker reads the bundled ones."""
    line = _tweet("$ aapl services revenue grew again this quarter", "Fri Jan 02 10:00:00 +0000 2015")
    _archive(folder, {"2015-01-02": line})
    assert read_archives(folder) == 1
    return StocknetSocialSource(folder)


def _forbid_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_read(*_: object) -> None:
        raise AssertionError("the archive was read")

    monkeypatch.setattr(social, "_read_days", not_read)


def test_an_archive_noted_to_end_before_the_window_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _read_ahead(tmp_path)
    social.day_files.cache_clear()  # its days no longer in memory: only its newest day is known
    _forbid_reading(monkeypatch)
    assert source.posts("AAPL", since=date(2017, 8, 25), until=date(2017, 9, 1)) == []
    monkeypatch.undo()
    # A window the archive reaches is read as ever.
    assert [p.published for p in source.posts("AAPL", since=date(2015, 1, 1))] == [date(2015, 1, 2)]


def test_archives_read_ahead_are_not_read_again_by_a_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker reads the bundled archives before it forks; its work-horses' searches then decompress none."""
    source = _read_ahead(tmp_path)
    _forbid_reading(monkeypatch)
    assert [p.published for p in source.posts("AAPL", since=date(2015, 1, 1))] == [date(2015, 1, 2)]
