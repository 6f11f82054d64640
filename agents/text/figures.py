"""Model prose made safe to show: ``[[fact id]]`` becomes the fact's value from the store; any other number
a model typed is removed and counted (LLMs never own a number).

Not figures, so they stay: references to time (calendar years, quarter labels, dates such as "2026-10-30",
"March 12" or "10/30/2026"), durations ("12 months", "a 3-year view"), a lone digit counting things, and
any number the analyst's own brief contains (``keep``: "over the next 12 months" in the question may come
back in the memo). Counts and durations written in words have no digits and are never touched.

``segments`` splits prose token by token; what a reader sees is ``agents.text.reader.paragraph``: a sentence
that stated a figure nobody can trace, or that slipped into another script than the brief's
(agents.text.scripts), is withheld whole, so no sentence is left with a hole in it, and one line at the
end of its paragraph says what was withheld and why.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from agents.text.scripts import Language, slips
from agents.text.sentences import sentences

REF = re.compile(r"\[\[([A-Za-z0-9.\-]+:[a-z0-9_]+:[A-Za-z0-9\-]+)\]\]")
# Anything written as a reference: one that is not exactly a known id ("[[AAPL:revenue:FY2O24]]" with a
# letter O, a zero-width space or a trailing blank in it) is removed whole, not shown as text with its digits.
BRACKETED = re.compile(r"\[\[([^\[\]\n]{0,200})\]\]")
# A figure: digits (grouped by commas or spaces, with decimals, an exponent, a sign, currency, a scale or a
# percent) standing alone. Not a figure: digits inside a word or an id ("FY2024", "1w", "Q3"), the parts of an
# ISO date, a calendar year, or a lone digit counting things ("iteration 2", "3 falsifiers").
NUMBER = re.compile(
    r"(?<![\w\[.\-/:])[-+]?[$€£]?\d(?:[\d,]*\d)?(?:[ \u00a0\u2009\u202f]\d{3}(?!\d))*"
    r"(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"(?:\s?(?:%|percent\b|bps\b|bn\b|[kKmMbB]\b|million\b|billion\b|trillion\b|x\b))?(?![\w\-/:])"
)
NOT_A_FIGURE = re.compile(r"^(?:(?:19|20)\d{2}|\d)$", re.ASCII)
# What is left after NUMBER: a word with a numeral glued into it stays only in a shape that names a time or
# a thing (a year, an ISO date, a lone digit, a label or an id such as "FY2024Q3", "10-K", "alpha_1w"), in
# ASCII; "grew12%", "USD3.4bn", "12-15%", ".45", "1.2e9", "３", "½" and "Ⅻ" are figures and go.
WORD = re.compile(r"[^\s—–]+")
KEPT_WORD = re.compile(
    r"(?:19|20)\d{2}(?:[-/](?:19|20)?\d{2})?|\d{4}-\d{2}-\d{2}|\d"
    r"|\d{1,2}/\d{1,2}/(?:19|20)\d{2}|(?:19|20)\d{2}/\d{1,2}/\d{1,2}"  # 10/30/2026, 2026/10/30
    r"|(?=[\w&:/\-]*[A-Za-z])[A-Za-z0-9_&:/\-]+",
    re.ASCII,
)
FIGURE_IN_WORD = re.compile(
    r"\d{5}"  # a long run of digits is a quantity, not a label
    r"|\d[-_]?(?:(?i:percent|pct|bps|bp|bn|billion|mn|million|trillion|tn|fold)|[kmbx])(?![a-z])"
    r"|^(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|HKD|INR|KRW)\d",
    re.ASCII,
)
DOCUMENT_ID = re.compile(r"[a-z]+(?:-[a-z]+)*:[0-9a-f]{16}", re.ASCII)  # agents.data.documents.document_id
OPENING = "\"'“‘(<[{*#"
CLOSING = "\"'”’)>]}*.,;:!?"
POSSESSIVE = re.compile(r"['’]s$")
REMOVED = "[figure removed]"
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
# A day of the month written beside its month: "March 12", "Mar. 12", "12 March", "12 of March".
MONTH_BEFORE = re.compile(rf"\b{MONTH}\s+$", re.IGNORECASE)
MONTH_AFTER = re.compile(rf"^\s+(?:of\s+)?{MONTH}\b", re.IGNORECASE)
DAY = re.compile(r"^(?:[1-9]|[12]\d|3[01])$", re.ASCII)
# A duration: a plain count of a unit of time ("12 months", "18-month", "1.5 years", "90 trading days").
DURATION_AFTER = re.compile(
    r"^(?:\s|-)(?:trading\s+)?(?:day|week|month|quarter|year|yr|session|hour)s?\b", re.IGNORECASE
)
PLAIN_COUNT = re.compile(r"^\d{1,3}(?:\.\d)?$", re.ASCII)
_BLANKS = re.compile(r"[\s\u00a0\u2009\u202f]")
PERCENT = re.compile(r"%|percent|pct|bps|bp\b|basis point", re.IGNORECASE)
MONEY = re.compile(
    r"[$€£¥₹]|\b(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|HKD|INR|KRW)|(?:bn|billion|million|trillion|mn|tn)\b"
    r"|\d(?:[kKmMbB])\b",
)
MULTIPLE = re.compile(r"\d\s?x\b|fold|\btimes\b", re.IGNORECASE)
# A figure spelled out: a number word with a unit ("eight percent", "two billion dollars", "three times"). A
# decoder that may not type digits (agents.text.patterns) can still say a number in words; with a unit it is
# a figure the model owns, and goes like a typed one. A count in words ("three risks") is no figure.
_UNITS_WORD = (
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a\s+hundred"
    r"|hundred|a\s+thousand|thousand|a\s+half|half\s+a|one\s+and\s+a\s+half|a\s+quarter"
)
SPELLED = re.compile(
    rf"\b(?:{_UNITS_WORD})(?:[\s-]+(?:point[\s-]+)?(?:{_UNITS_WORD}))*"
    r"[\s-]+(?:hundred[\s-]+)?(?:percent(?:age\s+points?)?|per\s+cent|basis\s+points?|bps|trillion|billion"
    r"|million|dollars?|cents?|times|fold)\b"
    # A decimal in words is a figure with or without a unit ("an alpha of one point nine").
    rf"|\b(?:{_UNITS_WORD})[\s-]+point[\s-]+(?:{_UNITS_WORD})(?:[\s-]+(?:{_UNITS_WORD}))*\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Segment:
    """A piece of rendered prose: plain text, a fact reference, a removed model-typed number, or (in
    ``reader_segments``) a withheld sentence with code's note in its place."""

    kind: str  # "text", "fact", "removed", "withheld"
    text: str
    fact_id: str = ""
    what: str = ""  # for "removed": what kind of figure it was ("a percentage"), never the figure itself


Ids = set[str] | frozenset[str]
UNKNOWN_REFERENCE = "a reference to a figure the run was not given"
OTHER_SCRIPT = "words in another script than the brief's"


def segments(text: str, known_ids: Ids, keep: frozenset[str] = frozenset()) -> list[Segment]:
    """Split prose into text, fact references (unknown ids are shown as removed) and removed numbers.
    ``keep``: numbers the analyst's brief contains (``brief_numbers``), which are not the model's."""
    out: list[Segment] = []
    position = 0
    for match in BRACKETED.finditer(text):
        out.extend(_plain(text[position : match.start()], keep))
        fact_id = match.group(1)
        if fact_id in known_ids:
            out.append(Segment("fact", fact_id, fact_id))
        else:
            out.append(Segment("removed", REMOVED, what=UNKNOWN_REFERENCE))
        position = match.end()
    out.extend(_plain(text[position:], keep))
    return merged(out)


def merged(parts: list[Segment]) -> list[Segment]:
    """Adjacent plain text as one segment."""
    out: list[Segment] = []
    for part in parts:
        if out and part.kind == "text" and out[-1].kind == "text":
            out[-1] = Segment("text", out[-1].text + part.text)
        else:
            out.append(part)
    return out


def withheld_sentences(
    text: str, known_ids: Ids, keep: frozenset[str] = frozenset(), language: Language | None = None
) -> list[list[str]]:
    """For each sentence ``reader_segments`` withholds, what kinds of figure it stated (and ``OTHER_SCRIPT``
    when it slipped into another script than the brief's)."""
    out = []
    for sentence in sentences(text):
        removed = [part.what for part in segments(sentence, known_ids, keep) if part.kind == "removed"]
        if language is not None and slips(sentence, language):
            removed.append(OTHER_SCRIPT)
        if removed:
            out.append(removed)
    return out


def joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def figure_kind(token: str) -> str:
    """What a removed figure was, in words a page may show (the figure itself never is)."""
    if PERCENT.search(token):
        return "a percentage"
    if MONEY.search(token):
        return "an amount"
    if MULTIPLE.search(token):
        return "a multiple"
    return "a number"


def brief_numbers(*texts: str) -> frozenset[str]:
    """Every number the analyst's brief contains, as ``segments`` compares them: the analyst's own words,
    which the memo may repeat ("over the next 12 months")."""
    found: set[str] = set()
    for text in texts:
        for segment_text in _numbers_in(text):
            found.add(_norm(segment_text))
    return frozenset(found)


def _numbers_in(text: str) -> list[str]:
    tokens = [match.group(0).strip() for match in NUMBER.finditer(text)]
    for match in WORD.finditer(text):
        word = match.group(0).strip(OPENING + CLOSING)
        if any(unicodedata.category(char).startswith("N") for char in word):
            tokens.append(POSSESSIVE.sub("", word))
    return tokens


def _norm(token: str) -> str:
    return _BLANKS.sub("", unicodedata.normalize("NFKC", token)).lower()


def _not_a_figure(text: str, match: re.Match[str], keep: frozenset[str]) -> bool:
    token = match.group(0).strip()
    if NOT_A_FIGURE.match(token) or (keep and _norm(token) in keep):
        return True
    before, after = text[: match.start()], text[match.end() :]
    if DAY.match(token) and (MONTH_BEFORE.search(before) or MONTH_AFTER.match(after)):
        return True  # a day of the month
    return bool(PLAIN_COUNT.match(token) and DURATION_AFTER.match(after))


def _plain(text: str, keep: frozenset[str]) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for match in SPELLED.finditer(text):
        out.extend(_digits(text[position : match.start()], keep))
        out.append(Segment("removed", REMOVED, what=figure_kind(match.group(0))))
        position = match.end()
    out.extend(_digits(text[position:], keep))
    return out


def _digits(text: str, keep: frozenset[str]) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for match in NUMBER.finditer(text):
        out.extend(_words(text[position : match.start()], keep))
        if _not_a_figure(text, match, keep):
            out.append(Segment("text", match.group(0)))
        else:
            out.append(Segment("removed", REMOVED, what=figure_kind(match.group(0))))
        position = match.end()
    out.extend(_words(text[position:], keep))
    return out


def word_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where each word of ``text`` stands, less the quotes, brackets and marks around it ("(12%)," is
    "12%"): what a figure in a word is looked for in, here and in a rendered deck
    (agents.deck.factcheck.extract)."""
    for match in WORD.finditer(text):
        start, end = match.start(), match.end()
        while start < end and text[start] in OPENING:
            start += 1
        while end > start and text[end - 1] in CLOSING:
            end -= 1
        yield start, end


def _words(text: str, keep: frozenset[str]) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for start, end in word_spans(text):
        # OPENING and CLOSING hold no numeral: the word has one exactly when its trimmed span does.
        if not any(unicodedata.category(char).startswith("N") for char in text[start:end]):
            continue
        core = POSSESSIVE.sub("", text[start:end])
        if _kept(core) or (keep and _norm(core) in keep):
            continue
        if start > position:
            out.append(Segment("text", text[position:start]))
        out.append(Segment("removed", REMOVED, what=figure_kind(core)))
        position = end
    if position < len(text):
        out.append(Segment("text", text[position:]))
    return out


def _kept(word: str) -> bool:
    if DOCUMENT_ID.fullmatch(word):
        return True
    return bool(KEPT_WORD.fullmatch(word)) and not FIGURE_IN_WORD.search(word)


def removed_count(text: str, known_ids: Ids, keep: frozenset[str] = frozenset()) -> int:
    return sum(1 for segment in segments(text, known_ids, keep) if segment.kind == "removed")


def removed_kinds(text: str, known_ids: Ids, keep: frozenset[str] = frozenset()) -> list[str]:
    """What each removed figure of the text was (in order), for the memo's list of what code removed."""
    return [segment.what for segment in segments(text, known_ids, keep) if segment.kind == "removed"]


def fact_ids_in(text: str) -> list[str]:
    return [match.group(1) for match in REF.finditer(text)]
