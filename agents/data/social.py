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

import json
import re
import tarfile
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

from agents.data.documents import document_id
from agents.data.errors import MalformedData
from agents.data.types import SourceDocument
from agents.text.untrusted import normalise_text

SOURCE = "stocknet (Twitter, 2014-2015)"
MIN_TOKENS = 6
TITLE_CHARS = 140
_CASHTAG = re.compile(r"\$ (?=[a-z])")
_DAY_FILE = re.compile(r"^[A-Z.\-]+/(\d{4}-\d{2}-\d{2})$")


def post_text(tokens: list[str]) -> str:
    """The tokens as one line: "$ aapl" back to "$aapl", and no blank before punctuation."""
    line = _CASHTAG.sub("$", " ".join(tokens))
    return re.sub(r" ([!?.,;:…])", r"\1", line)


class StocknetSocialSource:
    """Posts about one symbol from the bundled stocknet tweets, newest first."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the stocknet folder: tweets/<SYMBOL>.tar.gz

    def symbols(self) -> list[str]:
        return sorted(path.name.removesuffix(".tar.gz") for path in (self.root / "tweets").glob("*.tar.gz"))

    def posts(self, ticker: str, *, until: date | None = None, limit: int = 8) -> list[SourceDocument]:
        """The newest ``limit`` distinct posts about ``ticker`` published on or before ``until``; none for a
        symbol the set does not cover."""
        path = self.root / "tweets" / f"{ticker.upper()}.tar.gz"
        if not path.is_file() or limit <= 0:
            return []
        chosen: list[SourceDocument] = []
        seen: set[str] = set()
        for day, lines in self._days(path, until):
            for raw in lines:
                post = self._post(ticker.upper(), raw, day, where=path)
                if post is None or post.text in seen:
                    continue
                seen.add(post.text)
                chosen.append(post)
                if len(chosen) >= limit:
                    return chosen
        return chosen

    def _days(self, path: Path, until: date | None) -> Iterator[tuple[date, list[str]]]:
        """Each day's lines, newest day first, days after ``until`` skipped."""
        try:
            with tarfile.open(path, "r:gz") as archive:
                members = []
                for member in archive.getmembers():
                    match = _DAY_FILE.match(member.name)
                    if member.isfile() and match:
                        day = date.fromisoformat(match.group(1))
                        if until is None or day <= until:
                            members.append((day, member))
                members.sort(key=lambda item: item[0], reverse=True)
                for day, member in members:
                    handle = archive.extractfile(member)
                    if handle is None:
                        continue
                    lines = handle.read().decode("utf-8").splitlines()
                    # Within a day, the file lists newest first; keep it.
                    yield day, lines
        except (OSError, tarfile.TarError, UnicodeDecodeError, ValueError) as exc:
            raise MalformedData(f"{path} could not be read as stocknet tweets: {exc}") from exc

    def _post(self, ticker: str, raw: str, day: date, *, where: Path) -> SourceDocument | None:
        try:
            item = json.loads(raw)
            tokens = [str(token) for token in item["text"]]
            posted = datetime.strptime(item["created_at"], "%a %b %d %H:%M:%S %z %Y")
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
