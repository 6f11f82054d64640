"""Social posts as SourceDocuments: the stocknet tweets bundled in ``data/snapshot/stocknet/`` (MIT; Xu &
Cohen, ACL 2018, "Stock Movement Prediction from Tweets and Historical Prices").

``tweets/<SYMBOL>.tar.gz`` holds one file per day (2014-01-01..2015-12-31), one JSON object per line:
``text`` as a list of lower-cased tokens (links replaced by ``URL``, mentions by ``AT_USER``), ``created_at``
and ``user_id_str``. A post is shown as its tokens joined, with "$" glued back to its ticker; it is untrusted
text (normalised here, fenced in every prompt, quoted, never followed). Retweets, posts whose text was
already chosen, and posts of fewer than ``MIN_TOKENS`` tokens are left out. Its id is
``social:<hash of symbol, user and time>``.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import zlib
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG

import numpy as np

from agents.data.documents import document_id
from agents.data.errors import MalformedData
from agents.data.types import SourceDocument
from agents.text.untrusted import normalise_text

SOURCE = "stocknet (Twitter, 2014-2015)"
MIN_TOKENS = 6
TITLE_CHARS = 140
_CASHTAG = re.compile(r"\$ (?=[a-z])")
_DAY_FILE = re.compile(r"^[A-Z.\-]+/(\d{4}-\d{2}-\d{2})$")
BLOCK = 512  # a tar archive's block: a header, or a file's bytes padded to whole blocks
# A day file holds the posts of its day as stocknet dated them; a post's own date (UTC) may be the next.
EDGE = timedelta(days=1)


def post_text(tokens: list[str]) -> str:
    """The tokens as one line: "$ aapl" back to "$aapl", and no blank before punctuation."""
    line = _CASHTAG.sub("$", " ".join(tokens))
    return re.sub(r" ([!?.,;:…])", r"\1", line)


# In English whatever the process's locale, as Twitter wrote them.
_MONTHS = {
    name: number
    for number, name in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1
    )
}
_DAYS = frozenset(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])


def posted_at(text: str) -> datetime:
    """Twitter's ``created_at`` ("Fri Jan 02 10:00:00 +0000 2015"), as ``strptime`` with "%a %b %d %H:%M:%S
    %z %Y" reads it, in 4 us against strptime's 10 us (a screen reads some 4,800 posts), and without the
    lock strptime takes, which the screen's parallel readings queued on. Raises ValueError for anything
    else."""
    parts = text.split(" ")
    if len(parts) != 6 or parts[0] not in _DAYS or parts[1] not in _MONTHS:
        raise ValueError(f"not a tweet's time: {text!r}")
    _, month, day, clock, offset, year = parts
    hour, minute, second = clock.split(":")
    if not (len(offset) == 5 and offset[0] in "+-" and offset[1:].isdigit() and len(year) == 4):
        raise ValueError(f"not a tweet's time: {text!r}")
    sign = -1 if offset[0] == "-" else 1
    zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
    return datetime(int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second), tzinfo=zone)


class StocknetSocialSource:
    """Posts about one symbol from the bundled stocknet tweets, newest first."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the stocknet folder: tweets/<SYMBOL>.tar.gz

    def symbols(self) -> list[str]:
        return sorted(path.name.removesuffix(".tar.gz") for path in (self.root / "tweets").glob("*.tar.gz"))

    def posts(
        self, ticker: str, *, until: date | None = None, limit: int = 8, since: date | None = None
    ) -> list[SourceDocument]:
        """The newest ``limit`` distinct posts about ``ticker`` published on or before ``until`` (and on or
        after ``since``); none for a symbol the set does not cover. An archive this process knows ends
        before ``since`` is not read at all (``read_archives``)."""
        path = self.root / "tweets" / f"{ticker.upper()}.tar.gz"
        identity = _identity(path)
        if identity is None or limit <= 0:
            return []
        if since is not None and _ends_before(identity, since):
            return []
        chosen: list[SourceDocument] = []
        seen: set[str] = set()
        for day, lines in self._days(path, identity, until):
            if since is not None and day < since - EDGE:
                break  # newest day first: the rest are older still
            for raw in lines:
                post = self._post(ticker.upper(), raw, day, where=path)
                if post is None or post.text in seen or _before(post, since):
                    continue
                seen.add(post.text)
                chosen.append(post)
                if len(chosen) >= limit:
                    return chosen
        return chosen

    def _days(self, path: Path, identity: _Identity, until: date | None) -> Iterator[tuple[date, list[str]]]:
        """Each day's lines, newest day first, days after ``until`` skipped."""
        try:
            days = day_files(path, identity[1], identity[2])
            for day in sorted((day for day in days if until is None or day <= until), reverse=True):
                # Within a day, the file lists newest first; keep it.
                yield day, days[day].decode("utf-8").splitlines()
        except (OSError, EOFError, zlib.error, tarfile.TarError, UnicodeDecodeError, ValueError) as exc:
            raise MalformedData(f"{path} could not be read as stocknet tweets: {exc}") from exc

    def _post(self, ticker: str, raw: str, day: date, *, where: Path) -> SourceDocument | None:
        try:
            item = json.loads(raw)
            tokens = [str(token) for token in item["text"]]
            posted = posted_at(item["created_at"])
            user = str(item["user_id_str"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise MalformedData(f"{where}: a post of {day} is not a stocknet tweet: {exc}") from exc
        if len(tokens) < MIN_TOKENS or (tokens and tokens[0] == "rt"):
            return None
        text = normalise_text(post_text(tokens), max_chars=600)
        return SourceDocument(
            doc_id=document_id("social", f"{ticker}\n{user}\n{posted.isoformat()}"),
            kind="social",
            title=text[:TITLE_CHARS],
            url="",
            published=posted.date(),
            source=SOURCE,
            text=text,
            tickers=(ticker,),
        )


def _before(post: SourceDocument, since: date | None) -> bool:
    return since is not None and (post.published is None or post.published < since)


def read_archives(root: Path) -> int:
    """Read every archive under ``root`` (a stocknet folder) now, keeping its days (``day_files``) and noting
    its newest: a worker does it before it forks, so that each work-horse has them all (26 MB of days, read
    in 0.2 s once) where every screen decompressed its symbols' archives on its path, 0.2 s of CPU that its
    ten parallel searches queued on; and a window after an archive's last day (the desk's weeks after 2015)
    reads none of it. Returns the archives read; one that cannot be read is left for the run that needs it
    to say so."""
    read = 0
    for path in sorted((root / "tweets").glob("*.tar.gz")):
        try:
            key = _identity(path)
            if key is None:
                continue
            day_files(path, key[1], key[2])
            read += 1
        except (OSError, EOFError, zlib.error, tarfile.TarError, UnicodeDecodeError, ValueError):
            continue
    return read


# An archive named by its path, modification time and size: a replaced file is another archive.
_Identity = tuple[str, int, int]

# Each archive's newest day, by its identity, once read in this process.
_NEWEST: dict[_Identity, date | None] = {}


def _identity(path: Path) -> _Identity | None:
    """The archive's identity (one stat); None where no regular file is there."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size) if S_ISREG(stat.st_mode) else None


def _ends_before(identity: _Identity, since: date) -> bool:
    """Whether the archive is known to hold no day on or after ``since``."""
    if identity not in _NEWEST:
        return False
    newest = _NEWEST[identity]
    return newest is None or newest < since - EDGE


# A screen reads 87 symbols' archives, some twice, and an agency a company's and its peers': each archive is
# read once per process (named by its size and modification time, so a replaced file is read again), and a
# worker reads the bundled ones before it forks (``read_archives``). The bound holds every archive of the
# bundled set (87, 26 MB of days).
@lru_cache(maxsize=128)
def day_files(path: Path, mtime_ns: int, size: int) -> dict[date, bytes]:
    """Every day file of a stocknet archive, by day. The archive is decompressed whole and its plain tar
    headers walked here: tarfile took 11-15 ms an archive in headers alone (a screen's news stage spent
    2 s in it), this walk 1 ms. An archive with anything but plain files and folders (a long name, pax
    headers) is read by tarfile instead."""
    days = _read_days(path)
    _NEWEST[(str(path), mtime_ns, size)] = max(days, default=None)
    return days


def _read_days(path: Path) -> dict[date, bytes]:
    data = gzip.decompress(path.read_bytes())
    try:
        return _plain_tar_days(data)
    except _NotPlain:
        return _tarfile_days(data)


class _NotPlain(Exception):
    pass


def _plain_tar_days(data: bytes) -> dict[date, bytes]:
    days: dict[date, bytes] = {}
    headers: list[int] = []  # where each header is: their checksums are checked together
    offset = 0
    try:
        while offset + BLOCK <= len(data):
            header = data[offset : offset + BLOCK]
            if header == bytes(BLOCK):
                break  # the end-of-archive blocks
            headers.append(offset)
            kind = header[156:157]
            # Another kind of member, a name continued in POSIX's prefix field, a size in base-256.
            if kind not in (b"0", b"\0", b"5") or _prefixed(header) or header[124] & 0x80:
                raise _NotPlain
            size = _octal(header[124:136])
            body = offset + BLOCK
            if body + size > len(data):
                raise tarfile.TarError(f"a file cut short at byte {offset}")
            match = _DAY_FILE.match(header[:100].split(b"\0", 1)[0].decode("utf-8"))
            if kind != b"5" and match:
                days[date.fromisoformat(match.group(1))] = data[body : body + size]
            offset = body + -(-size // BLOCK) * BLOCK
    except (_NotPlain, tarfile.TarError, ValueError, UnicodeDecodeError):
        _check_headers(data, headers)  # a damaged header is said as one, whatever it led the walk into
        raise
    _check_headers(data, headers)
    return days


def _check_headers(data: bytes, offsets: list[int]) -> None:
    """Each header's checksum against its bytes summed with the checksum field read as blanks, as tar
    computes it: summed for every header at once (summed one by one, they were half of a screen's walk
    through 87 archives, 70 of 150 ms)."""
    if not offsets:
        return
    rows = np.frombuffer(data, dtype=np.uint8)[np.asarray(offsets)[:, None] + np.arange(BLOCK)]
    sums = rows.sum(axis=1, dtype=np.int64) - rows[:, 148:156].sum(axis=1, dtype=np.int64) + 8 * 32
    for offset, computed in zip(offsets, sums.tolist(), strict=True):
        if computed != _octal(data[offset + 148 : offset + 156]):
            raise tarfile.TarError(f"a damaged header at byte {offset}")


def _tarfile_days(data: bytes) -> dict[date, bytes]:
    days: dict[date, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            match = _DAY_FILE.match(member.name)
            handle = archive.extractfile(member) if member.isfile() and match else None
            if handle is not None and match:
                days[date.fromisoformat(match.group(1))] = handle.read()
    return days


def _prefixed(header: bytes) -> bool:
    """A POSIX header whose name begins in its prefix field (a path longer than 100 bytes). GNU headers keep
    other fields there."""
    return header[257:263] == b"ustar\0" and header[345] != 0


def _octal(field: bytes) -> int:
    """A tar header's number: octal digits, ended by a NUL or a blank."""
    return int(field.split(b"\0", 1)[0].strip() or b"0", 8)
