"""Text in another script than the brief's: a slip a small model makes, caught by code.

The embedded 1.5B model once wrote "市场" (market) in the middle of an English bullet. Every workflow asks
the same question of what a model wrote, here: which runs of characters are in a script the brief's
readers do not read?

The brief's language is decided simply, from the brief's own letters: the Unicode scripts they are written
in (Unicode's Script_Extensions, as fontTools reads it), plus Latin always, since tickers, fact labels,
company names from filings and the desk's own words are Latin. So an English brief allows Latin letters and
every character that belongs to no script (digits, punctuation, symbols, combining marks); a brief written
in Chinese allows Han as well. Besides letters of another script, East Asian punctuation and full-width
forms ("。", "，", "３") are a slip too unless the brief itself is East Asian, since they come with the
switch of language. Never a slip: a name the fact store holds (``Language.names``, a company's as filed,
whatever its script), and a lone Greek letter standing as a symbol ("β", "Δ"), which finance writes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fontTools import unicodedata as scripts_data

LATIN = "Latn"
GREEK = "Grek"
# Unicode's "Common" and "Inherited": digits, punctuation, symbols, combining marks. Of no language.
_NO_SCRIPT = frozenset({"Zyyy", "Zinh", "Zzzz"})
EAST_ASIAN = frozenset({"Hani", "Hira", "Kana", "Hang", "Bopo"})
# A slip's label when it has no letter of one script: East Asian punctuation, a full-width digit.
EAST_ASIAN_FORMS = "East Asian forms"
_WIDE = frozenset({"F", "W"})
_WIDE_KINDS = ("P", "N", "Z")  # punctuation, digits and spaces; a wide symbol (an emoji) is no language


@dataclass(frozen=True)
class Language:
    """The scripts a brief's readers read, and the names that may appear in any script."""

    scripts: frozenset[str]
    names: tuple[str, ...] = ()

    @classmethod
    def of(cls, *texts: str, names: Iterable[str] = ()) -> Language:
        """The language of a brief written in ``texts``; ``names``: the names the fact store holds (only
        those with a character another script could flag are kept)."""
        found = {LATIN}
        for text in texts:
            for char in text:
                found |= _scripts(char)
        language = cls(frozenset(found))
        kept = tuple(dict.fromkeys(name for name in names if name and slips(name, language)))
        return cls(frozenset(found), kept)


ENGLISH = Language(frozenset({LATIN}))


@dataclass(frozen=True)
class Slip:
    """A run of characters in a script the brief's language does not use, as written."""

    text: str
    script: str  # its script's name ("Han", "Devanagari"), or EAST_ASIAN_FORMS

    @property
    def shown(self) -> str:
        """The characters as a page may quote them: never digits (a full-width "４２７" is a typed figure, and
        a page never shows a figure a model typed), nor a numeral of another script ("三")."""
        if any(unicodedata.numeric(char, None) is not None for char in self.text):
            return "(digits, not shown)"
        return f"'{self.text}'"

    def __str__(self) -> str:
        return f"{self.script} {self.shown}"


def slips(text: str, language: Language) -> list[Slip]:
    """Every run of characters in ``text`` written in a script ``language`` does not use, in order."""
    if text.isascii() and LATIN in language.scripts:
        return []  # ASCII letters are Latin, the rest of ASCII belongs to no script: most of what is read
    excused = _names_in(text, language.names)
    found: list[Slip] = []
    start: int | None = None
    for index, char in enumerate(f"{text} "):  # a blank at the end closes the last run
        foreign = index < len(text) and index not in excused and _foreign(char, language.scripts)
        mark = start is not None and _scripts(char) == set() and unicodedata.category(char).startswith("M")
        if foreign or mark:
            start = index if start is None else start
            continue
        if start is not None:
            run = text[start:index]
            if not _symbol(run, text, start, index):
                found.append(Slip(run, _label(run)))
            start = None
    return found


def note(found: Sequence[Slip]) -> str:
    """The slips in words: "Han '市场', Devanagari 'क्षेत्र'"."""
    return ", ".join(str(slip) for slip in dict.fromkeys(found))


@lru_cache(maxsize=8192)
def _scripts(char: str) -> frozenset[str]:
    return frozenset(scripts_data.script_extension(char)) - _NO_SCRIPT


@lru_cache(maxsize=8192)
def _foreign(char: str, scripts: frozenset[str]) -> bool:
    own = _scripts(char)
    if own:
        return not own & scripts
    if scripts & EAST_ASIAN:
        return False
    return unicodedata.east_asian_width(char) in _WIDE and unicodedata.category(char).startswith(_WIDE_KINDS)


def _symbol(run: str, text: str, start: int, end: int) -> bool:
    """A lone Greek letter between non-letters ("β of 1.2", "Δ margin") is a symbol, not a word."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return len(run) == 1 and _scripts(run) == {GREEK} and not before.isalpha() and not after.isalpha()


def _label(run: str) -> str:
    """The script most of the run's letters are in; punctuation shared by several scripts does not count."""
    codes = [next(iter(own)) for char in run if len(own := _scripts(char)) == 1]
    if not codes:
        return EAST_ASIAN_FORMS
    return str(scripts_data.script_name(max(dict.fromkeys(codes), key=codes.count)))


def _names_in(text: str, names: tuple[str, ...]) -> set[int]:
    """The positions of ``text`` inside an occurrence of one of ``names``."""
    covered: set[int] = set()
    for name in names:
        start = text.find(name)
        while start != -1:
            covered.update(range(start, start + len(name)))
            start = text.find(name, start + 1)
    return covered
