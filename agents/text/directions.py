"""Which way a sentence says its figures went: the direction words every workflow's check reads, by code.

A model writes "revenue declined" over two revenues that rose. No number is typed, so no figure check catches
it; but the sentence cites its figures, and code can set the words against them. Every workflow does, through
one reading (agents.text.figure_claims: each trend word against each step of the series of the metric it is
said of), with these words; the memo's audit also reads two briefs' words on one figure with ``said``.

The words are the deck's, where the checks first had to tell a misreading from what a careful reader would
call right. Left out on purpose:

- the noun "growth" (only the verbs count): "revenue growth declined" names a rate, then says where it went;
  the agency read it as up, and withheld it beside growth rates that had indeed declined;
- "slowed", "accelerated": they speak of a rate's change, which a level's figures cannot judge and a rate's
  sign does not tell ("growth slowed" beside a growth rate above zero is no contradiction);
- "higher", "lower": as often said of something else ("lower costs lifted the margin");
- "up", "down": particles more often than directions ("held up", "made up of", "broke down by segment");
- "loss": a noun of a figure's sign, not of its move ("the net loss narrowed" is no fall).

``UP`` and ``DOWN`` find the words; ``said`` gives every direction a text's words claim (a statement with
words both ways claims none, for the memo's reading across briefs, which cannot tell which metric each word
is about).
"""

from __future__ import annotations

import re
from typing import Literal

Direction = Literal["up", "down"]

UP = re.compile(
    r"\b(?:grew|grow(?:s|ing|n)?|increas\w*|ris(?:e|es|ing|en)|rose|climb\w*|gain\w*|expand\w*|improv\w*|"
    r"strengthen\w*)\b",
    re.IGNORECASE,
)
# "contract" as a verb or its noun of a move ("a contraction in margins"), not "new contracts".
DOWN = re.compile(
    r"\b(?:fell|fall(?:s|ing|en)?|declin\w*|decreas\w*|drop\w*|shr[ai]nk\w*|shrunk|contract(?:ed|ing|ion)|"
    r"weaken\w*|deteriorat\w*|erod\w*|s[ai]nk(?:s|ing)?|sunk)\b",
    re.IGNORECASE,
)


def said(text: str) -> frozenset[Direction]:
    """Every direction the text's words claim: none, one, or both."""
    found: set[Direction] = set()
    if UP.search(text):
        found.add("up")
    if DOWN.search(text):
        found.add("down")
    return frozenset(found)
