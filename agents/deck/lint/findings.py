"""What the render lint (T7) reports: one ``Finding`` per problem, named by slide and shape.

Kept apart from the rules so that every rule module can build findings without importing the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

Rule = Literal[
    "unreadable",  # the bytes are not a presentation python-pptx can open: every slide is broken
    "missing_slide",  # a slide of the spec has no slide in the file (checked only when the deck is given)
    "off_slide",
    "overlap",
    "overflow",
    "wall_of_text",
    "empty_text",
    "placeholder_text",
    "garbled_text",  # control characters, U+FFFD or python-pptx's _xHHHH_ escapes where words should be
    "chart_missing_figures",
]
RULES: tuple[Rule, ...] = get_args(Rule)

SLIDE_WIDE = "(slide)"  # the shape name of a finding about a whole slide rather than one of its shapes


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: Rule
    slide: int  # 1-based position of the slide in the file; 0 for the file as a whole
    shape: str  # the shape's name ("Title", "Bullets", "Table"), or SLIDE_WIDE
    message: str


def finding_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """How many findings of each rule, every rule present (zeros too), so two laps compare key by key."""
    counted = Counter(finding.rule for finding in findings)
    return {rule: counted[rule] for rule in RULES}
