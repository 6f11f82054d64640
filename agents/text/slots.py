"""A figure's place filled with a word that is no figure. A decoder barred from typing digits (agents.text.
patterns) sometimes keeps its sentence and writes a filler where the number was to go: the embedded model's
demo screen said "the market's beta being ouch ... The market's alpha was ouch ... The market's RSI was
ouch". agents.text.blanks catches a place left empty; this catches one filled with a word.

A figure's place here is a metric's name, then a verb or preposition that introduces its value ("was", "is",
"being", "at", "stood at", "reached"), then one word that ends its clause (a stop, a comma, "and",
"while", the sentence's end). That word must be a figure (a ``[[fact id]]`` reference, a number, a count in
words) or a word that describes a level without stating it ("high", "negative", "oversold", "unchanged").
Anything else in that place is a filler, whatever the word: the sentence is withheld, as a typed figure is.
"""

from __future__ import annotations

import re

# The names of what a figure measures, in the prose of every workflow that cites figures.
_METRIC = (
    r"beta|alpha|alpha\s+residual|rsi(?:14)?|volume|volume\s+ratio|return|returns|close|price|vix|yield|"
    r"spread|margin|revenue|growth|rate|ratio|score|volatility|drawdown|concentration|hhi|atr|"
    r"bollinger\s+position|sma\d*|eps|earnings"
)
_INTRO = (
    r"was|is|were|are|being|been|be|at|stood\s+at|stands\s+at|came\s+in\s+at|reached|hit|read|"
    r"equal(?:led|s)?\s+to|=|:"
)
_SLOT = re.compile(
    rf"\b(?:{_METRIC})(?:['’]s)?\s+(?:{_INTRO})\s+(?P<word>[^\W\d_][\w'’-]*)"
    r"(?=\s*(?:[.,;:!?…)]|$)|\s+(?:and|but|while|whereas|with|as|or|which|so|yet)\b)",
    re.IGNORECASE,
)

# Words that say a level without stating it: a reader learns something true from each.
_WORDS = """
    high higher highest low lower lowest elevated subdued negative positive flat unchanged strong stronger
    strongest weak weaker weakest heavy heavier light lighter above below up down oversold overbought neutral
    modest small smaller large larger significant insignificant muted mixed steady stable rising falling
    declining increasing decreasing volatile normal average typical unusual extreme moderate limited sharp
    steep slight minimal negligible substantial notable similar wide wider narrow narrower tight inverted
    contained bearish bullish healthy poor good bad better worse solid robust soft firm calm quiet depressed
    stretched extended benign unknown unavailable missing none nil pronounced meaningful material outsized
    thin thick lacklustre lackluster choppy erratic
    below-average above-average in-line negligible zero nothing
    one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
    half quarter double doubled tripled halved
"""
_DESCRIBES = frozenset(_WORDS.split())

FILLER = "it put a word that is no figure where a figure belongs"


def filler_word(sentence: str) -> str:
    """The word standing where ``sentence`` puts a figure, when it is no figure and says no level; ""
    otherwise. A ``[[fact id]]`` reference stands for its figure."""
    text = re.sub(r"\[\[[^\]]*\]\]", "1", sentence)
    for match in _SLOT.finditer(text):
        word = match.group("word")
        if word.lower().strip("'’-") not in _DESCRIBES:
            return word
    return ""
