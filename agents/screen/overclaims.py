"""Model prose read against code's grade of the evidence (seed 002's honesty protocol, in words): a sentence
that claims more than the sector's news reading holds is withheld with code's reason.

Measured on the embedded 1.5B (a week with no news in the desk at all): "AAPL moved ++ market and ++ own,
which is explained by strong evidence of a transient driver", under code's own "No sector-specific news
found". The flag was code's and right; the sentence beside it said the opposite. Code knows the evidence
grade (none, weak, strong, or unread) and which drivers the news analyst found, each transient or
structural, so it can read such a claim as it reads a figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.screen.flags import Assessed
from agents.text.sentences import without

STRONG = re.compile(r"\b(?:strong|solid|clear|compelling|robust)\s+(?:news\s+)?evidence\b", re.I)
TRANSIENT = re.compile(r"\btransient\s+(?:driver|catalyst|cause|factor|event)s?\b", re.I)
STRUCTURAL = re.compile(r"\bstructural\s+(?:driver|catalyst|cause|factor|shift|change)s?\b", re.I)
NEWS_EXPLAINS = re.compile(
    r"\b(?:the\s+)?news\s+(?:explains?|shows?|confirms?|identifies|points?\s+to|attributes?)\b", re.I
)
NEGATED = re.compile(r"\b(?:no|not|never|without|lacks?|nothing|neither|nor|absence)\b", re.I)


@dataclass(frozen=True)
class Evidence:
    """What code knows of a sector's news for one symbol: its grade and the kinds of driver found."""

    grade: Assessed
    transient: bool
    structural: bool


def overclaim(sentence: str, evidence: Evidence) -> str:
    """Why ``sentence`` claims more than ``evidence`` holds, or "" when it does not. A negated claim ("no
    transient driver was found") claims nothing."""
    if NEGATED.search(sentence):
        return ""
    if STRONG.search(sentence) and evidence.grade != "strong":
        return f"it claims strong evidence where code graded the sector's evidence {evidence.grade}"
    if TRANSIENT.search(sentence) and not evidence.transient:
        return "it names a transient driver the news analyst did not find"
    if STRUCTURAL.search(sentence) and not evidence.structural:
        return "it names a structural driver the news analyst did not find"
    if NEWS_EXPLAINS.search(sentence) and evidence.grade in ("none", "unread"):
        return f"it says the news explains the move where the sector's news is {evidence.grade}"
    return ""


@dataclass(frozen=True)
class Read:
    text: str
    withheld: list[str]  # code's note for each sentence withheld


def within_evidence(text: str, evidence: Evidence) -> Read:
    """``text`` less each sentence that claims more evidence than code found, with the reasons."""
    kept, withheld = without(text, lambda sentence: overclaim(sentence, evidence))
    return Read(kept, [f'withheld "{sentence.strip()[:80]}": {why}' for sentence, why in withheld])
