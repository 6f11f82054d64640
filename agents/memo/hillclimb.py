"""The hill-climb rule (seed 000): each iteration must raise J+ by at least 1.5 and lower J- by at least 1
against the one before, or it is rewritten with a changed aperture (at most ``MAX_REWRITES`` times)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.memo.schemas import JMinusScores, JPlusScores

MIN_JPLUS_GAIN = 1.5
MAX_JMINUS_CHANGE = -1
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
    jplus: int
    jminus: int
    delta_jplus: int | None
    delta_jminus: int | None
    passed: bool
    reason: str


def check(
    iteration: int,
    jplus: JPlusScores,
    jminus: JMinusScores,
    previous: tuple[JPlusScores, JMinusScores] | None,
) -> HillClimbCheck:
    if previous is None:
        return HillClimbCheck(
            iteration=iteration,
            jplus=jplus.total,
            jminus=jminus.total,
            delta_jplus=None,
            delta_jminus=None,
            passed=True,
            reason="first iteration: baseline",
        )
    delta_plus = jplus.total - previous[0].total
    delta_minus = jminus.total - previous[1].total
    problems = []
    if delta_plus < MIN_JPLUS_GAIN:
        problems.append(f"J+ moved {delta_plus:+d}, needs at least +{MIN_JPLUS_GAIN}")
    if delta_minus > MAX_JMINUS_CHANGE:
        problems.append(f"J- moved {delta_minus:+d}, needs at most {MAX_JMINUS_CHANGE}")
    passed = not problems
    reason = "dJ+ and dJ- both cleared their thresholds" if passed else "; ".join(problems)
    return HillClimbCheck(
        iteration=iteration,
        jplus=jplus.total,
        jminus=jminus.total,
        delta_jplus=delta_plus,
        delta_jminus=delta_minus,
        passed=passed,
        reason=reason,
    )


def aperture(rewrite_number: int) -> str:
    return APERTURES[rewrite_number % len(APERTURES)]
