"""Promotion and spam in posts, recognised by code (issue 32: a screen quoted "our penny stock picks have been
seeing massive gains" as a symbol's evidence). No model: declared patterns, each with the reason a reader is
shown, so a post left out says why and a false positive can be traced to the pattern that made it.

A post is promotional when one *strong* feature matches (a stock-pick service, a subscriber's gain boast,
"made millions", an app or chart-service advert), or two *weak* ones together (a call to click, hype, a
list of many tickers): each weak one alone is common in honest posts ("check it out", five tickers in a
market wrap). Read against the bundled stocknet tweets of the demo week (2015-08-21): the promotions there
are a handful of services posting the same templates under whichever cashtags they stuff in.

Texts arrive normalised and, for stocknet, tokenised and lower-cased ("4,000 %", "URL", "AT_USER"), so the
patterns ignore case and allow a space before a percent sign.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class Feature:
    name: str
    reason: str  # what a reader is told the post was left out for
    pattern: re.Pattern[str]
    strong: bool  # one strong feature is enough; weak ones count only in pairs


FEATURES: tuple[Feature, ...] = (
    Feature(
        "stock-pick promotion",
        "sells stock picks ('our new pick', 'a big new pick coming')",
        re.compile(
            r"\b(?:our|new|next|exclusive|secret|big|huge|massive)\b(?:\s+\w+){0,3}?\s+(?:stock\s+)?picks?\b"
            r"|\bpicks?\s+(?:is|are)\s+(?:out|coming)",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "penny-stock promotion",
        "promotes penny stocks",
        re.compile(r"\bpenny\s?stock(?:s|ing)?\b", _FLAGS),
        True,
    ),
    Feature(
        "subscriber gain boast",
        "boasts of what its subscribers or members gained",
        re.compile(
            r"\b(?:platinum|premium|vip)\s+(?:members|subscribers)\b"
            r"|\b(?:subscribers|members)\s+saw\b"
            r"|\b(?:alerts?|signals|picks|service)\b[^.!?]{0,25}\b(?:gained|gains|made|quadrupled|doubled)\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "percentage gain boast",
        "boasts a gain of hundreds or thousands of percent",
        # "gain 4,000 % in 10 months", "525 % gains", "gin over 550 % in 5 weeks": three digits or more.
        re.compile(
            r"\b(?:gain(?:ed|s)?|gin)\s+(?:of\s+|over\s+)?\d{1,3}(?:,\d{3})+\s?%|\b(?:gain(?:ed|s)?|gin)\s+"
            r"(?:of\s+|over\s+)?\d{3,}\s?%|\b\d[\d,]{2,}\s?%\s+(?:\+\s*)?(?:in\s+)?gains?\b"
            r"|\bup\s+to\s+\d[\d,]{2,}\s?%\s+since\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "made millions",
        "promises riches ('made millions learning to trade', 'a millionaire mentor')",
        re.compile(
            r"\bmade\s+(?:millions|a\s+fortune|\$\s?\d[\d,]{4,})|\bmak(?:e|es|ing)\s+(?:many\s+)?millions\b|\bmillionaire\s+(?:trading\s+)?(?:student|mentor|trader)s?\b"
            r"|\blearn(?:ing)?\s+(?:how\s+)?to\s+trade\b|\bjoin\s+us\s+and\s+learn\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "trade boast",
        "boasts a dollar profit from following a service",
        re.compile(
            r"\$\s?\d[\d,]{3,}(?:\.\s?\d+)?\s+(?:in\s+(?:just\s+)?one\s+trade|profit\b)"
            r"|\bby\s+follow\w*\s+(?:their|our)\s+(?:signals|alerts|picks)"
            r"|\bsupertrades?\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "trading-course advert",
        "sells a trading course or service ('become a successful online trader', 'we teach you to trade')",
        # Read on the agency's F2 for Apple (issue 32): each became a claim, then a move. Not a bare "free
        # trial": a product's free trial is news (Apple Music's ended in September 2015).
        re.compile(
            r"\bbecome\s+a\s+(?:successful|profitable|better)\s+(?:online\s+|day\s+|stock\s+)?trader\b"
            r"|\b(?:we|i)\s+teach\s+you\s+(?:how\s+)?to\s+(?:day\s+)?trade\b"
            r"|\bsign\s+up\s+for\s+(?:our|a)\s+free\s+trial\b|\bfully\s+automated\s+trading\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "app or service advert",
        "advertises an app, a watchlist or a free-analysis service",
        re.compile(
            r"\b(?:under\s+one|in\s+(?:1|one))\s+watchlist\b|\btry\s+\w+\s+for\s+(?:ios|android)\b"
            r"|\bgroup\s+of\s+tickers\b|\bfree\s+(?:target\s+price\s+|tech\s+|technical\s+)?analysis\b"
            r"|\bsee\s+my\s+last\s+(?:free\s+)?(?:trading\s+ideas|analysis)\b"
            r"|\breceived\s+a\s+new\s+alert\b|\bstock\s+options\s+chatroom\b|\bcurated\s+(?:news|tweets)\b"
            r"|\b(?:trading\s+)?dvd\b|\bmobile\s+trading\s+app\b|\bfree\s+(?:algorithmic\s+)?trading\s+software\b",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "quote-page spam",
        "a bot's link to a quote page, with other tickers stuffed in",
        # "ko coca cola co. eod data URL $ko $rdus ...", "$tza filings updated wednesday, august 12, 2015 ..."
        re.compile(
            r"\b(?:eod\s+data|stock\s+forum|company\s+info|investor\s+opinions|stock\s+message\s+board"
            r"|52wk\s+(?:low|high)|ex-div\s+date|short\s+sales|last\s+(?:trade|price)|prev\s+close"
            r"|market\s+cap|current\s+price|p\s?/\s?e\s+ratio|day\s+(?:high|low))\s+URL\s+\$"
            r"|\bupdated\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day,\s+\w+\s+\d",
            _FLAGS,
        ),
        True,
    ),
    Feature(
        "link bait",
        "asks the reader to click through ('see it early', 'subscribe here', 'more info here')",
        re.compile(
            r"\bsee\s+it\s+early\b|\bsubscribe\b|\bmore\s+info\s+here\b|\bcheck\s+it\s+out\b"
            r"|\bspecial\s+(?:update|access)\b|\bsee\s+the\s+private\b|\bhuge\s+news\b|\bsign\s+up\b"
            r"|\bfind\s+out\s+why\b|\bclick\s+here\b|\binvestors\s+read\b",
            _FLAGS,
        ),
        False,
    ),
    Feature(
        "hype",
        "hype ('massive gains!', 'huge new')",
        re.compile(r"\b(?:massive|huge|explosive|exclusive|secret)\b[^.!?]{0,40}!|!{2,}", _FLAGS),
        False,
    ),
)
# A list of this many distinct cashtags is how a promotion reaches many tickers' streams; a market wrap
# names as many, so it counts as a weak feature only.
MANY_CASHTAGS = 5
_CASHTAG = re.compile(r"(?<![\w$])\$([a-z][a-z.\-]{0,6})\b", _FLAGS)
STUFFING = "ticker stuffing"


@dataclass(frozen=True)
class Verdict:
    features: tuple[str, ...]  # the names of the features found, in FEATURES order
    reasons: tuple[str, ...]
    promotional: bool

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)


def cashtags(text: str) -> set[str]:
    """The distinct cashtags of a text, upper-cased, without the dollar sign ("$xom" -> "XOM")."""
    return {tag.upper() for tag in _CASHTAG.findall(text)}


@lru_cache(maxsize=8192)
def read(text: str) -> Verdict:
    """What promotion features ``text`` shows, and whether they make it promotional.

    Kept per text (the verdict is frozen): a screen reads the same posts once per query that finds them, again
    for each symbol of their sector when it flags and when it draws its dashboard, some 1,200 reads of 19
    patterns for a few hundred posts."""
    found = [feature for feature in FEATURES if feature.pattern.search(text)]
    names = [feature.name for feature in found]
    reasons = [feature.reason for feature in found]
    weak = sum(1 for feature in found if not feature.strong)
    tags = len(cashtags(text))
    if tags >= MANY_CASHTAGS:
        names.append(STUFFING)
        reasons.append(f"names {tags} tickers")
        weak += 1
    promotional = any(feature.strong for feature in found) or weak >= 2
    return Verdict(tuple(names), tuple(reasons), promotional)


def promotional(text: str) -> bool:
    return read(text).promotional
