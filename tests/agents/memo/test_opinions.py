"""Two evaluators, one verdict kept (agents.memo.opinions.conservative): the more cautious whichever evaluator
gave it, so neither the order of the evaluators nor a lenient second can soften a memo's verdict."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.memo.opinions import Opinion, conservative
from agents.memo.verdict import Verdict


def opinion(role: str, decision: str, jplus: str, jminus: str = "3") -> Opinion:
    """What ``conservative`` reads of an opinion: its verdict's decision and calibrated composites. The
    evaluation behind it is not read, so it is left out (constructed without validation)."""
    verdict = Verdict(
        decision="REVISE" if decision == "REVISE" else "ACCEPT",
        reason="",
        calibrated_jplus=Decimal(jplus),
        calibrated_jminus=Decimal(jminus),
        inflation={},
        recalibrated_hill_climb=[],
        next_run="",
    )
    fields: dict[str, object] = {"role": role, "model": f"{role}-model", "verdict": verdict}
    return Opinion.model_construct(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("harsh", "lenient", "why"),
    [
        (opinion("a", "REVISE", "7"), opinion("b", "ACCEPT", "5"), "REVISE over ACCEPT, whatever the scores"),
        (opinion("a", "ACCEPT", "5"), opinion("b", "ACCEPT", "6"), "the lower calibrated J+"),
        (opinion("a", "REVISE", "5", "4"), opinion("b", "REVISE", "5", "2"), "then the higher calibrated J-"),
    ],
)
def test_the_more_cautious_opinion_is_kept_whichever_evaluator_gave_it(
    harsh: Opinion, lenient: Opinion, why: str
) -> None:
    assert conservative(harsh, lenient) == (harsh, lenient), why
    assert conservative(lenient, harsh) == (harsh, lenient), why


def test_a_tie_keeps_the_first_evaluator() -> None:
    first, second = opinion("evaluator", "ACCEPT", "6"), opinion("second_evaluator", "ACCEPT", "6")
    assert conservative(first, second) == (first, second)
