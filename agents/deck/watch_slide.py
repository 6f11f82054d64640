"""The "what to watch" slide: the brief's latest memo version quoted by code, after the risks slide.

A committee reads the deck beside the memo it approved: the deck should say what that memo argued and what
would move it. Code quotes the memo's own frozen words (its thesis, its dated catalysts with the direction
it expected, the falsifiers the risks slide did not already quote), never a model's summary of them. Each
quoted line goes through the resolver's ``cited`` words: a ``[[fact id]]`` citation becomes that figure,
printed and fact-checked like any other; a sentence citing a figure the deck was not given, or typing a
number of its own, is withheld. The slide stays within the summary's word bound and a line fits its box.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.deck.lint.text import MAX_PARAGRAPH_WORDS
from agents.deck.spec import Bullet, Figure, Slide
from agents.text.sentences import sentences

WATCH_SECTION = "What to watch"
MAX_WATCH_WORDS = 90  # under the lint's summary bound (100), which also counts each figure's label
MAX_LINE_CHARS = 220  # a quoted line longer than this would crowd the box: it is left out, not cut
# A quoted line longer than the lint's paragraph bound (30 words) is left out too: cut, it would misquote.
MAX_WATCH_BULLETS = 4
FIGURE_WORDS = 4  # a figure printed after a line: "Revenue FY2025: USD 416,161 M"
_COUNTS = {1: "one", 2: "two", 3: "three"}
_LEADING_IF = re.compile(r"^if\s+", re.IGNORECASE)


@dataclass(frozen=True)
class MemoCatalyst:
    """One catalyst as the memo froze it: when, which way it expected the shares to move, and what."""

    date: str  # ISO, checked by the memo's code against its horizon
    sign: str  # "positive" or "negative"
    event: str


# A memo text as the slide may print it: its words, and the figures its citations became.
Cited = Callable[[str, str], tuple[str, list[Figure]]]


def watch_slide(
    number: int,
    version: str,
    *,
    thesis: str,
    catalysts: Sequence[MemoCatalyst],
    falsifiers: Sequence[str],
    cited: Cited,
) -> Slide | None:
    """The slide, or None when nothing of the memo can be shown."""
    lines: list[tuple[Bullet, str]] = []  # each line, and its catalyst's date ("" for another line)
    said, figures = cited(thesis, "watch: thesis")
    said = _opening(said, MAX_PARAGRAPH_WORDS - _words("The thesis:"))
    if said and len(said) <= MAX_LINE_CHARS:
        shown = tuple(figure for figure in figures if figure.display in said)
        lines.append((Bullet(text=f"The thesis: {said}", inline=shown), ""))
    for index, catalyst in enumerate(catalysts, start=1):
        said, figures = cited(catalyst.event, f"watch: catalyst {index}")
        if said and len(said) <= MAX_LINE_CHARS:
            way = "expected to help" if catalyst.sign == "positive" else "expected to weigh"
            bullet = Bullet(text=f"By {catalyst.date}, {way}: {said}", inline=tuple(figures))
            lines.append((bullet, catalyst.date))
    for index, line in enumerate(falsifiers, start=1):
        said, figures = cited(line, f"watch: falsifier {index}")
        if said and len(said) <= MAX_LINE_CHARS:
            lines.append((Bullet(text=f"Wrong if: {without_if(said)}", inline=tuple(figures)), ""))
    takeaway = f"What the {version} argued, and the dated events that would move its view."
    # The budget leaves room for the longest title the lines could give; the title counts the catalysts kept.
    longest = _title(version, [date for _, date in lines if date])
    kept = _within_words(lines, budget=MAX_WATCH_WORDS - _words(longest) - _words(takeaway))
    if not kept:
        return None
    title = _title(version, [date for _, date in kept if date])
    return Slide(
        number=number,
        section=WATCH_SECTION,
        kind="watch",
        title=title,
        takeaway=takeaway,
        bullets=tuple(bullet for bullet, _ in kept),
    )


def without_if(falsifier: str) -> str:
    """A falsifier as it follows "wrong if:": the memo's own leading "if" dropped (the embedded model's
    "if revenue growth turns negative, ..." read "wrong if: if revenue ...")."""
    return _LEADING_IF.sub("", falsifier.strip())


def _title(version: str, dated: Sequence[str]) -> str:
    if not dated:
        return f"The {version}'s thesis, and what would prove it wrong"
    count = _COUNTS.get(len(dated), str(len(dated)))
    plural = "catalyst" if len(dated) == 1 else "catalysts"
    return f"The {version} expects {count} {plural} by {max(dated)}"


def _within_words(lines: Sequence[tuple[Bullet, str]], budget: int) -> list[tuple[Bullet, str]]:
    """The lines in order, each that fits the words left, up to ``MAX_WATCH_BULLETS``."""
    kept: list[tuple[Bullet, str]] = []
    for line in lines:
        cost = _words(line[0].text) + FIGURE_WORDS * len(line[0].figures)
        if cost > budget or cost > MAX_PARAGRAPH_WORDS:  # a longer line is a paragraph, read, not seen
            continue
        kept.append(line)
        budget -= cost
        if len(kept) == MAX_WATCH_BULLETS:
            break
    return kept


def _opening(text: str, max_words: int) -> str:
    """The text's opening whole sentences within ``max_words``: a thesis is quoted from its start, never
    cut inside a sentence."""
    kept = ""
    for sentence in sentences(text):
        if _words(kept + sentence) > max_words:
            break
        kept += sentence
    return kept.strip()


def _words(text: str) -> int:
    return len(text.split())
