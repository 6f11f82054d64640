"""The deck's calls that run side by side, and why each may (memos.pipeline.breadth)."""

from __future__ import annotations

from memos.pipeline.breadth import Breadth

SLIDES = Breadth(
    "slides",
    "the framing and each section's slide are drafted from the same frozen scope and figures; none reads "
    "another's text",
)
JUDGEMENTS = Breadth(
    "candidate and best",
    "a lap's candidate and the best deck so far are judged apart, so the judge's drift between laps shows",
    distinct_verdicts="each judges another deck: the candidate, and the unchanged best re-scored",
)
