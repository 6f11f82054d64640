"""Iteration N answers iteration N-1's "what I missed" (seed 000), checked by code.

The synthesizer says, gap by gap, where it addressed each one (a named section of the memo) or why it is out
of scope. Code holds it to that: every gap of the previous list needs an answer, and a gap "addressed" in a
section that reads exactly as it did before was not addressed. The result is one row per previous gap,
which the iteration's page shows beside the gap itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.memo.schemas import GapAnswer, Section, SynthesisIteration

GapOutcome = Literal["addressed", "out_of_scope", "unchanged", "unanswered"]
ANSWERED: frozenset[str] = frozenset({"addressed", "out_of_scope"})


class GapCheck(BaseModel):
    """One gap of the previous iteration and what code found of its answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gap: int  # its number in the previous list, from 1
    text: str  # the gap as the previous iteration wrote it
    outcome: GapOutcome
    section: Section | None = None
    note: str = ""

    @property
    def answered(self) -> bool:
        return self.outcome in ANSWERED


def section_text(iteration: SynthesisIteration, section: Section) -> str:
    """A section's content as a comparable string."""
    memo, analysis = iteration.memo, iteration.analysis
    if section in ("macro", "meso", "micro"):
        return str(getattr(analysis, section))
    if section == "catalysts":
        return "\n".join(f"{c.date} {c.expected_sign} {c.event}" for c in memo.catalysts)
    if section == "falsifiers":
        return "\n".join(memo.falsifiers)
    if section == "sizing":
        return f"{memo.sizing} {memo.sizing_rationale}"
    return str(getattr(memo, section))


def check(previous: SynthesisIteration | None, current: SynthesisIteration) -> list[GapCheck]:
    """One row per gap of ``previous`` (none for a first iteration)."""
    if previous is None:
        return []
    answers: dict[int, GapAnswer] = {}
    for given in current.answered_gaps:
        answers.setdefault(given.gap, given)  # the first answer to a gap counts
    rows = []
    for number, gap in enumerate(previous.what_i_missed, 1):
        answer = answers.get(number)
        if answer is None:
            rows.append(GapCheck(gap=number, text=gap, outcome="unanswered"))
            continue
        outcome: GapOutcome = answer.status
        if answer.status == "addressed" and section_text(previous, answer.section) == section_text(
            current, answer.section
        ):
            outcome = "unchanged"
        rows.append(GapCheck(gap=number, text=gap, outcome=outcome, section=answer.section, note=answer.note))
    return rows


def problems(rows: list[GapCheck]) -> list[str]:
    """What is wrong with the answers, in code's words for a re-ask (the gaps are quoted by number only)."""
    out = []
    for row in rows:
        if row.outcome == "unanswered":
            out.append(f"gap {row.gap} of the previous list has no entry in answered_gaps")
        elif row.outcome == "unchanged":
            out.append(
                f"gap {row.gap} is marked addressed in {row.section}, but {row.section} is unchanged "
                "from the previous iteration"
            )
    return out


def all_answered(rows: list[GapCheck]) -> bool:
    return all(row.answered for row in rows)
