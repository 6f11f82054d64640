"""The hill-climb rule (seed 000): each iteration must raise J+ by at least 1.5 and lower J- by at least 1
against the one before, or it is rewritten with a changed aperture (at most ``MAX_REWRITES`` times).

The thresholds and the composites' weights are the run's pinned memo rubric (``agents.memo.rubric``); 1.5 and
-1 are the seed file's values.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.memo.rubric import Composite, MemoRubric, seed_rubric
from agents.memo.schemas import JMinusScores, JPlusScores

MAX_REWRITES = 1

# Apertures a forced rewrite is pointed at, in order: each looks at the memo from somewhere it has not been.
APERTURES = (
    "the bear case: argue from the disconfirming evidence first, then rebuild the thesis",
    "second-order effects: how one specialist's finding changes another's",
    "the competitor's view: what a rival's management would say this memo gets wrong",
)


class HillClimbCheck(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    iteration: int
    jplus: Composite
    jminus: Composite
    delta_jplus: Composite | None
    delta_jminus: Composite | None
    passed: bool
    reason: str


def check(
    iteration: int,
    jplus: JPlusScores,
    jminus: JMinusScores,
    previous: tuple[JPlusScores, JMinusScores] | None,
    *,
    rubric: MemoRubric | None = None,
) -> HillClimbCheck:
    rules = rubric or seed_rubric()
    plus, minus = rules.jplus(jplus), rules.jminus(jminus)
    if previous is None:
        return HillClimbCheck(
            iteration=iteration,
            jplus=plus,
            jminus=minus,
            delta_jplus=None,
            delta_jminus=None,
            passed=True,
            reason="first iteration: baseline",
        )
    delta_plus = _delta(plus, rules.jplus(previous[0]))
    delta_minus = _delta(minus, rules.jminus(previous[1]))
    problems = []
    if delta_plus < rules.min_jplus_gain:
        problems.append(f"J+ moved {delta_plus:+g}, needs at least {rules.min_jplus_gain:+g}")
    if delta_minus > rules.max_jminus_change:
        problems.append(f"J- moved {delta_minus:+g}, needs at most {rules.max_jminus_change:+g}")
    passed = not problems
    reason = "dJ+ and dJ- both cleared their thresholds" if passed else "; ".join(problems)
    return HillClimbCheck(
        iteration=iteration,
        jplus=plus,
        jminus=minus,
        delta_jplus=delta_plus,
        delta_jminus=delta_minus,
        passed=passed,
        reason=reason,
    )


def _delta(now: Composite, before: Composite) -> Composite:
    # Composites carry two decimals: 6.3 - 4.8 must be 1.5, not 1.4999999999999991 (which fails a 1.5 bar).
    value = round(now - before, 2)
    return int(value) if float(value).is_integer() else value


def aperture(rewrite_number: int) -> str:
    return APERTURES[rewrite_number % len(APERTURES)]
