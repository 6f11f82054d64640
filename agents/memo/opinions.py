"""Two evaluators of one memo (issue 20, seed 003's rule that a verdict comes from another family than the
work it judges): where a second evaluator is configured on another model, both grade the memo, each grade is
turned into a verdict by the same code (agents.memo.verdict), and the run keeps the more conservative one. The
places where they disagree (a different decision, or scores two points or more apart on a dimension) are
listed for the reader, by code.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.memo.quotes import QuoteCheck
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, Evaluation
from agents.memo.verdict import Verdict

# A dimension is scored 0-2: two points apart is one evaluator finding it absent where the other finds it
# fully there. The composites (0-10) count as apart from two points too.
APART = 2


class Opinion(BaseModel):
    """One evaluator's grades and the verdict code drew from them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    model: str
    evaluation: Evaluation
    verdict: Verdict
    quotes: list[QuoteCheck] = []


class Disagreement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    what: str  # "decision" or a dimension's name
    iteration: int  # 0 for the decision
    kept: str  # the kept verdict's side, as a reader reads it ("REVISE", "4")
    other: str


def conservative(first: Opinion, second: Opinion) -> tuple[Opinion, Opinion]:
    """(kept, other): REVISE over ACCEPT; between equal decisions, the lower calibrated J+, then the higher
    calibrated J-; the first evaluator when they tie."""

    def caution(opinion: Opinion) -> tuple[int, float, float]:
        verdict = opinion.verdict
        return (
            0 if verdict.decision == "REVISE" else 1,
            float(verdict.calibrated_jplus),
            -float(verdict.calibrated_jminus),
        )

    return (second, first) if caution(second) < caution(first) else (first, second)


def disagreements(kept: Opinion, other: Opinion) -> list[Disagreement]:
    """The decision, the composites, then each iteration's dimensions, where the two part ways."""
    out = []
    if kept.verdict.decision != other.verdict.decision:
        out.append(
            Disagreement(
                what="decision", iteration=0, kept=kept.verdict.decision, other=other.verdict.decision
            )
        )
    for name, mine_total, their_total in (
        ("calibrated J+", kept.verdict.calibrated_jplus, other.verdict.calibrated_jplus),
        ("calibrated J-", kept.verdict.calibrated_jminus, other.verdict.calibrated_jminus),
    ):
        if abs(float(mine_total) - float(their_total)) >= APART:
            out.append(Disagreement(what=name, iteration=0, kept=f"{mine_total:g}", other=f"{their_total:g}"))
    others = {grade.iteration: grade for grade in other.evaluation.grades}
    for grade in kept.evaluation.grades:
        theirs = others.get(grade.iteration)
        if theirs is None:
            continue
        for scores, their_scores, names in (
            (grade.jplus, theirs.jplus, JPLUS_DIMENSIONS),
            (grade.jminus, theirs.jminus, JMINUS_DIMENSIONS),
        ):
            for name in names:
                mine, yours = int(getattr(scores, name)), int(getattr(their_scores, name))
                if abs(mine - yours) >= APART:
                    out.append(
                        Disagreement(what=name, iteration=grade.iteration, kept=str(mine), other=str(yours))
                    )
    return out
