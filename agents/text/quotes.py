"""Whether a quote is a passage of what it claims to quote, word for word, by code.

Every workflow that asks a model to quote (the memo's evaluator, a debate's board member answering the
critic, a score's justification) checks the quote the same way: after folding only what a copy may change
without changing the words (blanks, typographic quotes and dashes, case, a leading or trailing ellipsis),
the quote must appear in one of the texts, and be at least ``MIN_WORDS`` long to count as a passage.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MIN_WORDS = 3
_BLANKS = re.compile(r"\s+")
_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "—": "-", "–": "-", "−": "-"})
EDGES = " \"'.…"


def fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD).casefold()
    return _BLANKS.sub(" ", folded).strip()


def folded_quote(quote: str) -> str:
    return fold(quote).strip(EDGES)


def quote_problem(quote: str, texts: Iterable[str], *, where: str) -> str:
    """Why ``quote`` is not a passage of ``texts`` (``where`` names them for the reason), or ""."""
    passage = folded_quote(quote)
    if len(passage.split()) < MIN_WORDS:
        return f"the quote is shorter than {MIN_WORDS} words: not a passage"
    if not any(passage in fold(text) for text in texts):
        return f"the quote is not in {where}"
    return ""
