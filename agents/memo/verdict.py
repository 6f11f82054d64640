"""The evaluator's structured grades turned into the run's verdict, by code.

Inflation per dimension is the synthesizer's self-score minus the evaluator's calibrated score; the
recalibrated hill-climb re-applies the thresholds to the calibrated scores; ACCEPT needs the final
iteration's calibrated J+ at or above the rubric's ``accept_min_jplus`` and J- at or below its
``accept_max_jminus`` (the run's pinned memo rubric, ``agents.memo.rubric``; 5 and 4 in the seed file: "most
competent memos land 5-7", so a competent memo with little pitch-deck framing passes, not only a
paradigm-shifting one). The composites are computed from the rubric's weights.
A calibrated score whose divergence quotes nothing the evaluator was shown (``agents.memo.quotes``) does not
count: the synthesizer's self-score stands for that iteration and dimension.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.memo import hillclimb
from agents.memo.quotes import QuoteCheck, unsupported
from agents.memo.rubric import Composite, MemoRubric, seed_rubric
from agents.memo.schemas import (
    JMINUS_DIMENSIONS,
    JPLUS_DIMENSIONS,
    Evaluation,
    IterationGrade,
    JMinusScores,
    JPlusScores,
    SynthesisIteration,
)

SCORE_MAX = 2  # J+ and J- dimensions score 0-2 (agents.memo.schemas.Score)


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: Literal["ACCEPT", "REVISE"]
    reason: str
    calibrated_jplus: Composite
    calibrated_jminus: Composite
    inflation: dict[str, int]  # dimension -> self minus calibrated, final iteration
    recalibrated_hill_climb: list[hillclimb.HillClimbCheck]
    next_run: str
    # "iteration 2 · non_consensus": scores that did not count because their quote was not found
    uncounted: list[str] = []
    # The audit's penalty (agents.memo.entities): claims resting on names, dates or facts their sources
    # lack cap "source anchored"; the note says by how much.
    audit_penalty: str = ""
    # What code found wrong with the memo whatever the scores (agents.memo.thesis): any makes it REVISE.
    code_faults: list[str] = []


def counted_grades(
    iterations: list[SynthesisIteration], evaluation: Evaluation, quotes: list[QuoteCheck]
) -> dict[int, IterationGrade]:
    """The evaluator's grades by iteration, with every score a missing quote leaves unsupported replaced by
    the synthesizer's self-score for that iteration."""
    void = unsupported(quotes)
    grades: dict[int, IterationGrade] = {}
    for graded in evaluation.grades:
        grade = graded
        own = iterations[grade.iteration - 1] if 0 < grade.iteration <= len(iterations) else None
        if own is not None and any(number == grade.iteration for number, _ in void):
            plus = {
                d: getattr(own.self_jplus if (grade.iteration, d) in void else grade.jplus, d)
                for d in JPLUS_DIMENSIONS
            }
            minus = {
                d: getattr(own.self_jminus if (grade.iteration, d) in void else grade.jminus, d)
                for d in JMINUS_DIMENSIONS
            }
            grade = IterationGrade(
                iteration=grade.iteration,
                jplus=JPlusScores.model_validate(plus),
                jminus=JMinusScores.model_validate(minus),
            )
        grades.setdefault(grade.iteration, grade)
    return grades


def decide(
    iterations: list[SynthesisIteration],
    evaluation: Evaluation,
    quotes: list[QuoteCheck] | None = None,
    *,
    rubric: MemoRubric | None = None,
    penalties: int = 0,
    faults: list[str] | None = None,
) -> Verdict:
    """The verdict; ``penalties`` are the audit's unsupported and invented claims (AuditReport.penalties):
    each takes a point off the most "source anchored" may score, whatever the evaluator gave. ``faults``
    are code's findings on the final memo (agents.memo.thesis): any of them makes it REVISE, whatever the
    scores, since no score can outweigh a recommendation whose argument and evidence never meet."""
    rules = rubric or seed_rubric()
    checked = quotes or []
    grades = counted_grades(iterations, evaluation, checked)
    final_number = len(iterations)
    final = grades.get(final_number) or grades[max(grades)]
    audit_penalty = ""
    most = max(0, SCORE_MAX - penalties)
    if penalties and final.jplus.source_anchored > most:
        audit_penalty = (
            f"{penalties} claim{' rests' if penalties == 1 else 's rest'} on names, dates or facts their "
            f"sources lack: source anchored {final.jplus.source_anchored} -> {most}"
        )
        capped = final.jplus.model_copy(update={"source_anchored": most})
        final = final.model_copy(update={"jplus": capped})
    last = iterations[-1]
    inflation = {
        **{d: getattr(last.self_jplus, d) - getattr(final.jplus, d) for d in JPLUS_DIMENSIONS},
        **{d: getattr(final.jminus, d) - getattr(last.self_jminus, d) for d in JMINUS_DIMENSIONS},
    }
    checks = []
    previous = None
    for number in sorted(grades):
        grade = grades[number]
        checks.append(hillclimb.check(number, grade.jplus, grade.jminus, previous, rubric=rules))
        previous = (grade.jplus, grade.jminus)
    jplus, jminus = rules.jplus(final.jplus), rules.jminus(final.jminus)
    accepted = jplus >= rules.accept_min_jplus and jminus <= rules.accept_max_jminus
    reason = (
        f"calibrated J+ {jplus}/10 (needs >= {rules.accept_min_jplus}), "
        f"J- {jminus}/10 (needs <= {rules.accept_max_jminus})"
    )
    weakest = min(JPLUS_DIMENSIONS, key=lambda d: getattr(final.jplus, d))
    worst = max(JMINUS_DIMENSIONS, key=lambda d: getattr(final.jminus, d))
    next_run = (
        f"{evaluation.next_run_recommendation} (weakest J+ dimension: {weakest.replace('_', ' ')}; "
        f"worst J- dimension: {worst.replace('_', ' ')})"
    )
    uncounted = sorted(
        {
            f"iteration {number} · {dimension}"
            for number, dimension in unsupported(checked)
            if number in grades
        }
    )
    if uncounted:
        count = len(uncounted)
        reason += f"; {count} score{'' if count == 1 else 's'} without a verbatim quote did not count"
    if audit_penalty:
        reason += f"; {audit_penalty}"
    code_faults = list(faults or [])
    if code_faults:
        reason += "; " + "; ".join(f"code: {fault}" for fault in code_faults)
    return Verdict(
        decision="ACCEPT" if accepted and not code_faults else "REVISE",
        code_faults=code_faults,
        reason=reason,
        uncounted=uncounted,
        audit_penalty=audit_penalty,
        calibrated_jplus=jplus,
        calibrated_jminus=jminus,
        inflation=inflation,
        recalibrated_hill_climb=checks,
        next_run=next_run,
    )
