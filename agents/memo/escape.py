"""Seed 000's escape valve: stop iterating as soon as the thresholds are met, not always after N.

"Two iterations under-deliver depth; four are usually wasted. The hill-climb rule lets you abort earlier if
the thresholds are met sooner." Code stops the synthesis after iteration n (n >= 2, n < N) when all of these
hold, and the page says which held:
- the iteration passed the hill-climb rule against the one before (dJ+ >= +1.5, dJ- <= -1);
- it answered every gap of the one before (``agents.memo.gaps``);
- its self-scores clear the bar the evaluator's verdict will apply (``agents.memo.verdict``) even after
  the seed's inflation prior is taken off them: self-scores run 2-3 points high, so ``SELF_SCORE_PRIOR``
  (the high end) comes off J+ and goes onto J-.
A first iteration never stops the run: it has nothing to climb from and no gaps to answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.memo.gaps import GapCheck, all_answered
from agents.memo.hillclimb import HillClimbCheck
from agents.memo.rubric import MemoRubric, seed_rubric
from agents.memo.schemas import SynthesisIteration

SELF_SCORE_PRIOR = 3
FIRST_THAT_MAY_STOP = 2  # "two iterations under-deliver depth": never fewer


class EscapeCheck(BaseModel):
    """Whether the synthesis stops after this iteration, and code's reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stop: bool
    reason: str


def check(
    number: int,
    total: int,
    final: SynthesisIteration,
    hill_climb: HillClimbCheck,
    gaps: list[GapCheck],
    *,
    rubric: MemoRubric | None = None,
) -> EscapeCheck:
    rules = rubric or seed_rubric()
    if number >= total:
        return EscapeCheck(stop=False, reason=f"this is the last iteration planned ({number} of {total})")
    if number < FIRST_THAT_MAY_STOP:
        return EscapeCheck(stop=False, reason="a first iteration never stops the synthesis")
    plus = rules.jplus(final.self_jplus) - SELF_SCORE_PRIOR
    minus = rules.jminus(final.self_jminus) + SELF_SCORE_PRIOR
    missing = []
    if not hill_climb.passed:
        missing.append("it did not pass the hill-climb rule")
    if not all_answered(gaps):
        missing.append("it left gaps of the previous iteration unanswered")
    if plus < rules.accept_min_jplus:
        missing.append(f"J+ less the inflation prior is {plus:g}, below {rules.accept_min_jplus}")
    if minus > rules.accept_max_jminus:
        missing.append(f"J- plus the inflation prior is {minus:g}, above {rules.accept_max_jminus}")
    if missing:
        return EscapeCheck(stop=False, reason="; ".join(missing))
    return EscapeCheck(
        stop=True,
        reason=(
            f"thresholds met after iteration {number} of {total}: it passed the hill-climb rule, answered "
            f"every gap, and its self-scores less the {SELF_SCORE_PRIOR}-point inflation prior "
            f"(J+ {plus:g}, J- {minus:g}) clear the verdict's bar"
        ),
    )
