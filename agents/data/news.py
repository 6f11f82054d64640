"""News as SourceDocuments: bundled snapshots (Tiingo, NewsAPI), a live RSS 2.0 feed, FNSPID CSVs for tests.

Every title and text is untrusted and leaves here normalised (``agents.text.untrusted.normalise_text``); ids
are ``news:<hash of the canonical URL>`` (see ``agents.data.documents``). Dates are the calendar day the
source wrote, in the source's own time zone; a date the source does not state is ``None``, never a guess.

NewsAPI top headlines carry no tickers. ``SnapshotNewsSource`` links them to a ticker only when the title or
description mentions the ticker itself or one of the names in the ``aliases`` map the caller passes
(``{"DAL": ["Delta Air Lines"]}``), as a whole word and case-sensitively: "Apple" the company is capitalised,
and lower-case "apple" or "delta" is more often something else.
"""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from email.utils import parsedate_to_datetime
from functools import cached_property
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from agents.data.documents import (
    describe_validation,
    host_of,
    mention_pattern,
    newest_first,
    news_document_id,
    read_json,
    unique_by_id,
    within,
)
from agents.data.errors import MalformedData
from agents.data.http import Fetcher, shown_url
from agents.data.types import SourceDocument
from agents.text.untrusted import normalise_text

TIINGO_FILE = "tiingo_news_sample.json"
NEWSAPI_FILE = "newsapi_top_headlines_sample_2024-07-13.json"
# NewsAPI keeps the slot of a withdrawn article: title, source and text "[Removed]", dated 1970-01-01.
REMOVED_PLACEHOLDER = "[Removed]"
# NewsAPI cuts `content` at 200 characters and appends how much it left out.
_TRUNCATION_MARK = re.compile(r"\s*\[\+\d+ chars\]\s*$")


class NewsSource(Protocol):
    """News about one ticker, newest first, optionally within a window of publication dates (inclusive)."""

    def documents(
        self, ticker: str, *, since: date | None = None, until: date | None = None
    ) -> list[SourceDocument]: ...


def _one_line(text: str) -> str:
    return " ".join(normalise_text(text).split())


class _TiingoArticle(BaseModel):
    published_date: datetime = Field(alias="publishedDate")
    title: str
    url: str
    description: str = ""
    source: str
    tickers: list[str] = Field(default_factory=list)


class _TiingoResponse(BaseModel):
    articles: list[_TiingoArticle]


class _NewsApiPublisher(BaseModel):
    name: str


class _NewsApiArticle(BaseModel):
    source: _NewsApiPublisher
    title: str
    description: str | None = None
    url: str
    published_at: datetime = Field(alias="publishedAt")
    content: str | None = None


_NEWSAPI_ARTICLES = TypeAdapter(list[_NewsApiArticle])


def _article(
    *, url: str, title: str, source: str, published: date, text: str, tickers: tuple[str, ...] = ()
) -> SourceDocument:
    """One news article as a normalised document, its id derived from where and when it was published."""
    title, source = _one_line(title), _one_line(source)
    return SourceDocument(
        doc_id=news_document_id(url=url, source=source, title=title, published=published),
        kind="news",
        title=title,
        url=url.strip(),
        published=published,
        source=source,
        text=normalise_text(text),
        tickers=tickers,
    )


def _tiingo_document(article: _TiingoArticle) -> SourceDocument:
    return _article(
        url=article.url,
        title=article.title,
        source=article.source,
        published=article.published_date.date(),
        text=article.description,
        tickers=tuple(dict.fromkeys(ticker.strip().upper() for ticker in article.tickers)),
    )


def _newsapi_document(article: _NewsApiArticle) -> SourceDocument:
    content = _TRUNCATION_MARK.sub("", article.content or "")
    return _article(
        url=article.url,
        title=article.title,
        source=article.source.name,
        published=article.published_at.date(),
        text="\n\n".join(part for part in (article.description, content) if part),
    )


class SnapshotNewsSource:
    """The bundled news files under ``root/news/`` (the product snapshot or ../shared/data)."""

    def __init__(self, root: Path, *, aliases: Mapping[str, Sequence[str]] | None = None) -> None:
        self._news_dir = root / "news"
        self._aliases = {ticker.upper(): tuple(names) for ticker, names in (aliases or {}).items()}

    def documents(
        self, ticker: str, *, since: date | None = None, until: date | None = None
    ) -> list[SourceDocument]:
        symbol = ticker.strip().upper()
        found = [doc for doc in self._tagged({symbol, *self._aliases}) if symbol in doc.tickers]
        return within(newest_first(found), since=since, until=until)

    def all_documents(self, *, since: date | None = None, until: date | None = None) -> list[SourceDocument]:
        """Every article, newest first; NewsAPI ones carry the alias-map tickers they mention (maybe none)."""
        return within(newest_first(self._tagged(set(self._aliases))), since=since, until=until)

    def _tagged(self, candidates: set[str]) -> list[SourceDocument]:
        patterns = {
            ticker: mention_pattern(ticker, self._aliases.get(ticker, ())) for ticker in sorted(candidates)
        }
        newsapi = [
            doc.model_copy(update={"tickers": tuple(t for t, p in patterns.items() if p.search(searchable))})
            for doc, searchable in self._newsapi
        ]
        return unique_by_id([*self._tiingo, *newsapi])

    @cached_property
    def _tiingo(self) -> list[SourceDocument]:
        path = self._news_dir / TIINGO_FILE
        try:
            response = _TiingoResponse.model_validate(read_json(path))
        except ValidationError as exc:
            raise MalformedData(f"{path} is not a Tiingo news response: {describe_validation(exc)}") from exc
        return [_tiingo_document(article) for article in response.articles]

    @cached_property
    def _newsapi(self) -> list[tuple[SourceDocument, str]]:
        """Each real article with the text a ticker may be mentioned in (title and description)."""
        path = self._news_dir / NEWSAPI_FILE
        try:
            articles = _NEWSAPI_ARTICLES.validate_python(read_json(path))
        except ValidationError as exc:
            raise MalformedData(
                f"{path} is not a list of NewsAPI articles: {describe_validation(exc)}"
            ) from exc
        return [
            (_newsapi_document(article), normalise_text(f"{article.title}\n{article.description or ''}"))
            for article in articles
            if article.title != REMOVED_PLACEHOLDER
        ]


# Both kinds of declaration are how XML bombs and external-entity reads start; a news feed needs neither.
_DECLARATION = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def _rfc822_date(value: str | None) -> date | None:
    """The day an RSS ``pubDate`` names; ``None`` when it is missing or not an RFC 822 date."""
    if not value or not value.strip():
        return None
    try:
        return parsedate_to_datetime(value.strip()).date()
    except (TypeError, ValueError):
        return None


def parse_rss(body: bytes, *, origin: str, tickers: tuple[str, ...] = ()) -> list[SourceDocument]:
    """The items of an RSS 2.0 document as news SourceDocuments, in feed order.

    A body with a DTD or entity declaration is refused before parsing, and so is one with NUL bytes
    (UTF-16 or UTF-32, in which a byte search could not see a declaration).
    """
    if b"\x00" in body:
        raise MalformedData(f"{origin}: refusing a feed that is not UTF-8 or another ASCII-based encoding")
    if _DECLARATION.search(body):
        raise MalformedData(f"{origin}: refusing a feed with a DTD or entity declaration")
    try:
        root = ET.fromstring(body)  # noqa: S314  (declarations refused above: no entity expansion is possible)
    except ET.ParseError as exc:
        raise MalformedData(f"{origin} is not well-formed XML: {exc}") from exc
    channel = root.find("channel") if root.tag == "rss" else None
    if channel is None:
        raise MalformedData(f"{origin} is not an RSS 2.0 feed (its root element is <{root.tag}>)")
    feed_title = _one_line(channel.findtext("title") or "")
    documents = []
    for item in channel.findall("item"):
        title = _one_line(item.findtext("title") or "")
        link = (item.findtext("link") or "").strip()
        source = _one_line(item.findtext("source") or "") or feed_title or host_of(origin)
        published = _rfc822_date(item.findtext("pubDate"))
        documents.append(
            SourceDocument(
                doc_id=news_document_id(url=link, source=source, title=title, published=published),
                kind="news",
                title=title,
                url=link,
                published=published,
                source=source,
                text=normalise_text(item.findtext("description") or ""),
                tickers=tickers,
            )
        )
    return documents


# A headline feed is a few dozen items; even with full article text a real one stays well under 1 MB.
NEWS_MAX_BYTES = 2 * 1024 * 1024


def feed_hosts(feed_url_template: str) -> frozenset[str]:
    """The allow-list of a live news fetcher: the host of its configured feed and nothing else.

    The ticker may only vary the path or query: a ``{ticker}`` in the host would let a ticker choose it.
    """
    parts = urlsplit(feed_url_template)
    host = parts.hostname or ""
    if parts.scheme != "https" or not host or "{" in parts.netloc:
        raise ValueError(
            f"the feed URL template {feed_url_template!r} must be https:// with a fixed host name"
        )
    return frozenset({host})


class LiveNewsSource:
    """A per-ticker RSS 2.0 headline feed, fetched through a Fetcher (tests hand it recorded bodies).

    ``feed_url_template`` holds ``{ticker}``, replaced by the URL-quoted upper-case ticker. In production
    ``fetch`` is an ``http_fetcher`` whose allow-list is ``feed_hosts(feed_url_template)``, capped at
    ``NEWS_MAX_BYTES``.
    """

    def __init__(self, fetch: Fetcher, feed_url_template: str) -> None:
        if "{ticker}" not in feed_url_template:
            raise ValueError(f"the feed URL template {feed_url_template!r} has no {{ticker}} placeholder")
        # A template whose host no allow-list could hold is refused here, not at the first fetch.
        feed_hosts(feed_url_template)
        self._fetch = fetch
        self._template = feed_url_template

    def documents(
        self, ticker: str, *, since: date | None = None, until: date | None = None
    ) -> list[SourceDocument]:
        symbol = ticker.strip().upper()
        url = self._template.replace("{ticker}", quote(symbol, safe=""))
        items = parse_rss(self._fetch(url), origin=shown_url(url), tickers=(symbol,))
        return within(newest_first(unique_by_id(items)), since=since, until=until)


class LiveSearch:
    """A news search that answers in RSS 2.0 (a search feed: ``https://host/rss/search?q={query}``), fetched
    through a Fetcher whose allow-list is ``feed_hosts(url_template)``: the query varies only the query
    string, never the host. Each item is an untrusted news document, as a headline feed's is."""

    def __init__(self, fetch: Fetcher, url_template: str) -> None:
        if "{query}" not in url_template:
            raise ValueError(f"the search URL template {url_template!r} has no {{query}} placeholder")
        feed_hosts(url_template.replace("{query}", ""))  # https, a fixed host
        self._fetch = fetch
        self._template = url_template

    def search(
        self,
        query: str,
        *,
        since: date | None = None,
        until: date | None = None,
        tickers: tuple[str, ...] = (),
    ) -> list[SourceDocument]:
        url = self._template.replace("{query}", quote(query.strip(), safe=""))
        items = parse_rss(self._fetch(url), origin=shown_url(url), tickers=tickers)
        return within(newest_first(unique_by_id(items)), since=since, until=until)


# FNSPID (CC BY-NC 4.0): read by tests from ../shared/data only, never bundled into the product.
_FNSPID_HEADLINE_COLUMNS = ("Date", "Headline", "URL")
_FNSPID_CONTENT_COLUMNS = ("Date", "Url", "Text", "Mark")
# The scraper's Mark: 0 not fetched (Text "0"), 1 fetched, 2 members-only or deleted, 3 a MarketInsite page.
# When a fetch fails, the scraper writes the mark itself into Text and Date (a Date of "0", "2" or "3").
_FNSPID_NOT_FETCHED = "0"
_FNSPID_FETCHED = "1"
_FNSPID_UNAVAILABLE = ("2", "3")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# "JAN 25, 2024", "January 25, 2024 — 03:33 am EST", "FEB 2, 2024 9:32AM EST": the day as the site wrote it.
_ABSOLUTE_DATE = re.compile(r"^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4})\b")
_RELATIVE_DATE = re.compile(r"^(\d+) (HOUR|DAY)S? AGO$", re.IGNORECASE)


def fnspid_date(value: str, *, reference_date: date | None, where: str) -> date | None:
    """The publication day an FNSPID date cell names.

    "N DAYS AGO" counts back from ``reference_date`` (the scrape day, which the files do not record) and
    "N HOURS AGO" needs the scrape time as well, so it resolves only when ``reference_date`` is a datetime.
    Without the reference they stay ``None``.
    """
    text = value.strip()
    if relative := _RELATIVE_DATE.match(text):
        amount, unit = int(relative[1]), relative[2].upper()
        if unit == "DAY" and reference_date is not None:
            day = reference_date.date() if isinstance(reference_date, datetime) else reference_date
            return day - timedelta(days=amount)
        if unit == "HOUR" and isinstance(reference_date, datetime):
            return (reference_date - timedelta(hours=amount)).date()
        return None
    absolute = _ABSOLUTE_DATE.match(text)
    month = absolute[1][:3].lower() if absolute else ""
    if absolute is None or month not in _MONTHS:
        raise MalformedData(f"{where}: unrecognised date {value!r}")
    try:
        return date(int(absolute[3]), _MONTHS.index(month) + 1, int(absolute[2]))
    except ValueError as exc:
        raise MalformedData(f"{where}: impossible date {value!r}") from exc


def _read_fnspid_csv(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    try:
        # The files start with a UTF-8 byte-order mark; utf-8-sig drops it so the first column is "Date".
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in columns if column not in (reader.fieldnames or ())]
            if missing:
                raise MalformedData(
                    f"{path} is not an FNSPID news CSV: missing column(s) {', '.join(missing)}"
                )
            rows = list(reader)
    except OSError as exc:
        raise MalformedData(f"{path} could not be read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, csv.Error) as exc:
        raise MalformedData(f"{path} is not a readable CSV: {exc}") from exc
    for number, row in enumerate(rows, start=1):
        if any(row.get(column) is None for column in columns):
            raise MalformedData(f"{path} row {number} has fewer fields than the header")
    return rows


def read_fnspid_headlines(
    path: Path, *, ticker: str, reference_date: date | None = None
) -> list[SourceDocument]:
    """nasdaq.com headlines for ``ticker`` (the file does not name it), one per URL, in file order."""
    documents = []
    for number, row in enumerate(_read_fnspid_csv(path, _FNSPID_HEADLINE_COLUMNS), start=1):
        published = fnspid_date(row["Date"], reference_date=reference_date, where=f"{path} row {number}")
        title = _one_line(row["Headline"])
        source = host_of(row["URL"])
        documents.append(
            SourceDocument(
                doc_id=news_document_id(url=row["URL"], source=source, title=title, published=published),
                kind="news",
                title=title,
                url=row["URL"].strip(),
                published=published,
                source=source,
                tickers=(ticker.strip().upper(),),
            )
        )
    # The scraper paged a moving list, so a few articles appear twice; the first (newer) scrape wins.
    return unique_by_id(documents)


def read_fnspid_contents(
    path: Path, *, ticker: str, reference_date: date | None = None
) -> list[SourceDocument]:
    """Article bodies for ``ticker``, one per URL; text is empty where the scraper got none.

    The file has no headlines: each document's title is empty and its id equals the id of the same URL in
    ``read_fnspid_headlines``, which is how the two are joined.
    """
    documents = []
    for number, row in enumerate(_read_fnspid_csv(path, _FNSPID_CONTENT_COLUMNS), start=1):
        where = f"{path} row {number}"
        mark = row["Mark"].strip()
        if mark not in (_FNSPID_NOT_FETCHED, _FNSPID_FETCHED, *_FNSPID_UNAVAILABLE):
            raise MalformedData(f"{where}: unknown scrape mark {mark!r}")
        if mark in _FNSPID_UNAVAILABLE or row["Date"].strip() == _FNSPID_NOT_FETCHED:
            published = None
        else:
            published = fnspid_date(row["Date"], reference_date=reference_date, where=where)
        text = normalise_text(row["Text"]) if mark == _FNSPID_FETCHED else ""
        source = host_of(row["Url"])
        documents.append(
            SourceDocument(
                doc_id=news_document_id(url=row["Url"], source=source, title="", published=published),
                kind="news",
                title="",
                url=row["Url"].strip(),
                published=published,
                source=source,
                text=text,
                tickers=(ticker.strip().upper(),),
            )
        )
    # One article is listed twice, once fetched and once not: keep the copy with text, where it first appears.
    best: dict[str, SourceDocument] = {}
    for doc in documents:
        kept = best.get(doc.doc_id)
        if kept is None or (doc.text and not kept.text):
            best[doc.doc_id] = doc
    return list(best.values())
