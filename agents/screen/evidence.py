"""Each symbol's evidence, chosen by code for what it is about (issue 32). The news analyst searches per
sector (seed 002), so what a sector's reading found is the sector's; a symbol may quote as its own only a
document that names it: its cashtag, its ticker as a word, or its company's name. What the sector's
reading cited that does not name the symbol is shown as the sector's context, said to be about the
sector. Promotion and spam (agents.text.promotion) is neither: it is never quoted.

Before this, every symbol of a sector quoted the sector's first three posts, promotional ones included
("our penny stock picks have been seeing massive gains" under 27 of 87 symbols on the demo week), and XOM
quoted a post about $veev and $stx.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from agents.screen.outputs import Assessment, Document, NewsOutput, Searched
from agents.text.promotion import promotional

# The sentence a symbol gets when its sector has evidence but none of it names the symbol: its own sentence,
# code's, naming the symbol and what was searched, in place of the sector's quotes.
NOTHING_OWN = (
    "Limited evidence found for {symbol}: none of the {count} documents {searched} names {symbol} (by "
    "cashtag, ticker or company name), so no specific catalyst identified for {symbol}; the sources shown "
    "are {sector} context, not {symbol}'s evidence."
)
# Words of a company's name that say nothing of which company it is: legal forms, and first words many
# companies share ("General Electric" is not named by "general").
_LEGAL = {
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "companies",
    "ltd",
    "limited",
    "plc",
    "p",
    "l",
    "c",
    "sa",
    "s",
    "a",
    "nv",
    "n",
    "v",
    "ag",
    "se",
    "group",
    "holdings",
    "holding",
    "the",
    "adr",
}
_GENERIC_FIRST = {
    "american",
    "bank",
    "china",
    "general",
    "united",
    "royal",
    "first",
    "national",
    "international",
    "the",
    "new",
    "southern",
    "public",
    "union",
}
_SHORTEST_FIRST_WORD = 4
# A one-letter cashtag after a fragment of one or two letters or digits is not a ticker: "l $d" (a song),
# "1000 u $d", "the b3 $t l0v3".
_CASHTAG = re.compile(r"(?<![\w$])\$([a-z][a-z.\-]{0,6})\b", re.IGNORECASE)
_FRAGMENT_BEFORE = re.compile(r"(?:^|\s)([^\W_]{1,2})\s+$")
_TRADE_WORDS = re.compile(
    r"\b(?:stocks?|shares?|markets?|trad(?:e|es|ed|er|ers|ing)|invest\w*|dividends?|earnings|ratings?|rated"
    r"|analysts?|price|target|buy|sell|long|short|calls?|puts?|options?|bull\w*|bear\w*|nyse|nasdaq|dow"
    r"|upgrade\w*|downgrade\w*|ipo|sec|filing|ceo|profits?|revenues?|chart|signal|positions?|portfolio"
    r"|sp500|s\s?&\s?p|highs?|lows?|banks?|banking|rall(?:y|ies)|funds?|etfs?|uptrend|downtrend|support"
    r"|resistance|ema|sma|rsi)\b",
    re.IGNORECASE,
)
_COMMON_SHORT = {
    "of",
    "on",
    "in",
    "at",
    "to",
    "is",
    "by",
    "or",
    "as",
    "my",
    "so",
    "up",
    "no",
    "we",
    "it",
    "an",
}
_SHORTEST_TICKER_WORD = 3  # "D", "KO", "PM" as bare words are letters and words, not tickers


def _words(text: str) -> str:
    """Lower-case words joined by single spaces: "AT&T Inc." and "at & t" both read "at t"."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def short_names(company: str) -> tuple[str, ...]:
    """How a post may name the company: its name without the legal form ("exxon mobil"), and its first word
    where that word is its own ("exxon"; not "general" for General Electric, nor "bank")."""
    words = _words(company).split()
    while words and words[-1] in _LEGAL:
        words.pop()
    while words and words[0] == "the":
        words.pop(0)
    if not words:
        return ()
    names = [" ".join(words)]
    first = words[0]
    if len(words) > 1 and len(first) >= _SHORTEST_FIRST_WORD and first not in _GENERIC_FIRST:
        names.append(first)
    return tuple(dict.fromkeys(names))


def _tag(symbol: str) -> str:
    """A ticker as tags compare: "RDS-B" and "$rds.b" alike; "$pg.us" (its US listing) is PG, "$ppl.to"
    (Toronto's, another company) is not PPL."""
    return re.sub(r"[.\-]", "", re.sub(r"\.US$", "", symbol.upper()))


def _real_tags(text: str) -> set[str]:
    """The text's cashtags that are tickers, normalised ("RDS-B" -> "RDSB"). A one-letter one is a ticker
    only in a text about markets (another cashtag, or a word of the trade) and not right after a fragment:
    stocknet's tokens split a glued "teaml$d" as "teaml $d", which no rule on the fragment alone can tell
    from "stocks $d"."""
    matches = [(match, _tag(match.group(1))) for match in _CASHTAG.finditer(text)]
    longer = any(len(tag) > 1 for _, tag in matches)
    trade = longer or bool(_TRADE_WORDS.search(text))
    tags = set()
    for match, tag in matches:
        before = _FRAGMENT_BEFORE.search(text[: match.start()])
        # "at & t $t": the fragment before it is the ticker's own letter, its name said before its tag.
        fragment = before is not None and before.group(1).lower() not in {*_COMMON_SHORT, tag.lower()}
        if len(tag) == 1 and (not trade or fragment):
            continue
        tags.add(tag)
    return tags


def names_symbol(text: str, symbol: str, company: str) -> bool:
    """Whether ``text`` is about ``symbol``: its cashtag; or, in a text with no cashtag of another symbol,
    its ticker as an upper-case word (three letters or more) or its company's name. A text whose cashtags
    are all other symbols' is not about it, whatever else it says."""
    tags = _real_tags(text)
    if _tag(symbol) in tags:
        return True
    if tags:
        return False
    if len(symbol) >= _SHORTEST_TICKER_WORD and re.search(rf"(?<![\w$]){re.escape(symbol)}(?!\w)", text):
        return True
    said = f" {_words(text)} "
    return any(f" {name} " in said for name in short_names(company))


def may_be_about(text: str, symbol: str) -> bool:
    """Whether a post read from ``symbol``'s file may be about it: it carries no cashtag, or the symbol's as
    a ticker. "l $d" (a song, in D's file) carries "$d" only as part of a word: it is about nothing on the
    watchlist."""
    return not _CASHTAG.search(text) or _tag(symbol) in _real_tags(text)


def document_names(doc: Document, symbol: str, company: str) -> bool:
    """A news item or filing the desk tagged with the symbol names it (its tagging reads the whole item);
    a post names it only in its own words (a stocknet post sits in the file of any cashtag it carries)."""
    if doc.kind != "social" and symbol in doc.about:
        return True
    return names_symbol(f"{doc.title} {doc.text}", symbol, company)


def is_promotional(doc: Document) -> bool:
    return promotional(f"{doc.title} {doc.text}")


@dataclass(frozen=True)
class SymbolEvidence:
    symbol: str
    own: list[Document]  # documents the sector's searches found that name the symbol, those cited first
    context: list[Document]  # the sector's cited documents that do not name it: the sector's, said so
    promotional: list[Document]  # never quoted


def symbol_evidence(
    symbol: str, company: str, documents: Sequence[Document], cited: Collection[str]
) -> SymbolEvidence:
    """``documents``: what the symbol's sector's searches found; ``cited``: the ids its reading cited."""
    ordered = sorted(documents, key=lambda doc: doc.doc_id not in cited)  # stable: cited first
    own: list[Document] = []
    context: list[Document] = []
    spam: list[Document] = []
    for doc in ordered:
        if is_promotional(doc):
            spam.append(doc)
        elif document_names(doc, symbol, company):
            own.append(doc)
        elif doc.doc_id in cited:
            context.append(doc)
    return SymbolEvidence(symbol, own, context, spam)


def searched_text(sector: str, searches: Iterable[Searched]) -> str:
    """What a sector's searches looked for, in words: "the Energy searches found (Energy news; posts on its
    10 symbols; a deep dive on XOM, CVX over the month; to 2015-08-21)"."""
    parts: list[str] = []
    end: date | None = None
    for search in searches:
        query = search.query
        end = max(end, query.end) if end else query.end
        if query.kind == "news":
            parts.append(f"{sector} news")
        elif query.kind == "posts":
            parts.append(f"posts on its {len(query.symbols)} symbols")
        elif query.kind == "deep_dive":
            parts.append(f"a deep dive on {', '.join(query.symbols)} over the month")
    window = [*dict.fromkeys(parts), f"to {end}"] if end else list(dict.fromkeys(parts))
    return f"the {sector} searches found ({'; '.join(window)})"


def nothing_own(symbol: str, sector: str, count: int, searches: Iterable[Searched]) -> str:
    return NOTHING_OWN.format(
        symbol=symbol, count=count, searched=searched_text(sector, searches), sector=sector
    )


@dataclass(frozen=True)
class Tally:
    """A screen's evidence per symbol, counted two ways over one version: as this code quotes it (what names
    each symbol), and as the screen quoted before issue 32 (its sector's cited documents, for every symbol of
    the sector), so a version frozen before can be measured against one frozen after."""

    symbols: int
    own: int  # symbols with a non-promotional document of their own, as this code quotes them
    sector_quoted_own: int  # symbols whose sector's cited documents include one naming them
    sector_quoted_promotion: int  # symbols whose sector's cited documents include promotion
    sector_quoted_others: int  # symbols whose sector's cited documents include one not naming them
    left_out: int  # promotional posts the readings say code left out (summed over readings)


_LEFT_OUT = re.compile(r"code left out (\d+) promotional")


def tally(
    assessments: Sequence[Assessment], news: Mapping[str, NewsOutput], names: Mapping[str, str]
) -> Tally:
    own = quoted_own = quoted_spam = quoted_others = 0
    for a in assessments:
        reading = news.get(a.sector)
        if reading is None:
            continue
        company = names.get(a.symbol, a.symbol)
        by_id = {doc.doc_id: doc for doc in reading.documents}
        quoted = [by_id[ref] for ref in a.sources if ref in by_id]
        chosen = symbol_evidence(a.symbol, company, reading.documents, reading.cited)
        own += bool(chosen.own)
        quoted_own += any(document_names(d, a.symbol, company) and not is_promotional(d) for d in quoted)
        quoted_spam += any(is_promotional(d) for d in quoted)
        quoted_others += any(not document_names(d, a.symbol, company) for d in quoted)
    left_out = sum(
        int(found.group(1))
        for reading in news.values()
        for note in reading.dropped
        if (found := _LEFT_OUT.search(note))
    )
    return Tally(len(assessments), own, quoted_own, quoted_spam, quoted_others, left_out)
