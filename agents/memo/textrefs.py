"""Model prose made safe to show: ``[[fact id]]`` becomes the fact's value from the store; any other number
a model typed is removed and counted (LLMs never own a number). Calendar years and quarter labels are
references to time, not figures, and stay."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Segment:
    """A piece of rendered prose: plain text, a fact reference, or a removed model-typed number."""

    kind: str  # "text", "fact", "removed"
    text: str
    fact_id: str = ""


def segments(text: str, known_ids: set[str] | frozenset[str]) -> list[Segment]:
    """Split prose into text, fact references (unknown ids are shown as removed) and removed numbers."""
    out: list[Segment] = []
    position = 0
    for match in BRACKETED.finditer(text):
        out.extend(_plain(text[position : match.start()]))
        fact_id = match.group(1)
        out.append(Segment("fact", fact_id, fact_id) if fact_id in known_ids else Segment("removed", REMOVED))
        position = match.end()
    out.extend(_plain(text[position:]))
    return out


def _plain(text: str) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for match in NUMBER.finditer(text):
        token = match.group(0).strip()
        if NOT_A_FIGURE.match(token):
            continue
        out.extend(_words(text[position : match.start()]))
        out.append(Segment("removed", REMOVED))
        position = match.end()
    out.extend(_words(text[position:]))
    return out


def _words(text: str) -> list[Segment]:
    out: list[Segment] = []
    position = 0
    for match in WORD.finditer(text):
        word = match.group(0)
        if not any(unicodedata.category(char).startswith("N") for char in word):
            continue
        start, end = match.start(), match.end()
        while start < end and text[start] in OPENING:
            start += 1
        while end > start and text[end - 1] in CLOSING:
            end -= 1
        core = POSSESSIVE.sub("", text[start:end])
        if _kept(core):
            continue
        if start > position:
            out.append(Segment("text", text[position:start]))
        out.append(Segment("removed", REMOVED))
        position = end
    if position < len(text):
        out.append(Segment("text", text[position:]))
    return out


def _kept(word: str) -> bool:
    if DOCUMENT_ID.fullmatch(word):
        return True
    return bool(KEPT_WORD.fullmatch(word)) and not FIGURE_IN_WORD.search(word)


def removed_count(text: str, known_ids: set[str] | frozenset[str]) -> int:
    return sum(1 for segment in segments(text, known_ids) if segment.kind == "removed")


def fact_ids_in(text: str) -> list[str]:
    return [match.group(1) for match in REF.finditer(text)]
