"""The checks code runs on the synthesizer's and the evaluator's answers: catalyst dates, answered gaps,
verbatim quotes, and the escape valve that stops iterating once the thresholds are met."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from agents.memo import catalysts, escape, gaps, hillclimb, quotes
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, Evaluation
from agents.memo.verdict import decide
from tests.agents.memo.answers import iteration, spread

AS_OF = date(2026, 1, 30)

# --- catalysts: after the data's as-of date, within the memo's horizon


@pytest.mark.parametrize(
    ("brief", "months"),
    [
        ("Should we add to the position ahead of the product cycle?", 12),
        ("Should we add over the next 18 months?", 18),
        ("A 2-year view on the services mix.", 24),
        ("What happens in the next two quarters?", 6),
        ("Hold for the next eighteen months?", 18),
    ],
)
def test_the_horizon_is_the_one_the_brief_names_or_a_year(brief: str, months: int) -> None:
    assert catalysts.horizon_months(brief) == months


def test_a_catalyst_before_the_as_of_date_or_past_the_horizon_is_outside_the_window() -> None:
    window = catalysts.window(AS_OF, "over the next 12 months")
    assert window is not None and window.until == date(2027, 1, 30)
    memo = iteration(dates=("2023-09-01", "2026-10-30", "2027-02-01")).memo
    dropped = catalysts.outside(memo, window)
    assert [item.catalyst.date for item in dropped] == ["2023-09-01", "2027-02-01"]
    assert dropped[0].reason == "dated 2023-09-01, on or before the data's as-of date 2026-01-30"
    assert dropped[1].reason == "dated 2027-02-01, past the memo's 12-month horizon (it ends 2027-01-30)"
    assert [c.date for c in catalysts.kept(memo, window)] == ["2026-10-30"]
    edges = iteration(dates=("2026-01-30", "2027-01-30")).memo  # the as-of day is history; the last day is in
    assert [item.catalyst.date for item in catalysts.outside(edges, window)] == ["2026-01-30"]


def test_without_an_as_of_date_no_catalyst_is_dropped() -> None:
    memo = iteration(dates=("1999-01-01",)).memo
    assert catalysts.window(None, "") is None
    assert catalysts.outside(memo, None) == [] and catalysts.kept(memo, None) == list(memo.catalysts)


def test_a_month_end_horizon_lands_on_the_last_day_of_a_shorter_month() -> None:
    assert catalysts.add_months(date(2026, 8, 31), 6) == date(2027, 2, 28)


# --- gaps: iteration N answers iteration N-1's what-I-missed list


def _answer(gap: int, status: str, section: str, note: str = "Done there.") -> dict[str, Any]:
    return {"gap": gap, "status": status, "section": section, "note": note}


def test_every_gap_needs_an_answer_and_an_addressed_section_must_have_changed() -> None:
    previous = iteration()
    current = iteration(
        meso="Peers now set the bar on pricing.",
        answered=[
            _answer(1, "addressed", "meso"),
            _answer(2, "addressed", "macro"),  # claimed, but macro reads as before
        ],
    )
    rows = gaps.check(previous, current)
    assert [(row.gap, row.outcome) for row in rows] == [(1, "addressed"), (2, "unchanged"), (3, "unanswered")]
    assert rows[2].text == "The regulatory docket."
    assert gaps.problems(rows) == [
        "gap 2 is marked addressed in macro, but macro is unchanged from the previous iteration",
        "gap 3 of the previous list has no entry in answered_gaps",
    ]
    assert not gaps.all_answered(rows)


def test_a_gap_declared_out_of_scope_with_a_reason_is_answered() -> None:
    previous = iteration()
    current = iteration(
        meso="Peers now set the bar on pricing.",
        answered=[
            _answer(1, "addressed", "meso"),
            _answer(2, "out_of_scope", "macro", "No currency evidence reached this roster."),
            _answer(3, "out_of_scope", "risk_budget", "No regulatory evidence."),
        ],
    )
    rows = gaps.check(previous, current)
    assert gaps.all_answered(rows) and gaps.problems(rows) == []
    assert rows[1].note == "No currency evidence reached this roster."


def test_a_first_iteration_has_no_gaps_to_answer() -> None:
    assert gaps.check(None, iteration()) == []


# --- quotes: verbatim in what the evaluator judged, or the score does not count


def _evaluation(quote: str, *, jplus: int = 4) -> Evaluation:
    return Evaluation.model_validate(
        {
            "grades": [
                {
                    "iteration": 1,
                    "jplus": spread(JPLUS_DIMENSIONS, jplus),
                    "jminus": spread(JMINUS_DIMENSIONS, 3),
                }
            ],
            "divergences": [
                {
                    "iteration": 1,
                    "dimension": "source_anchored",
                    "quote": quote,
                    "justification": "It does not trace to a brief.",
                }
            ],
            "inflation_diagnosis": "Self-scores run high.",
            "next_run_recommendation": "Name the consensus.",
        }
    )


def test_a_quote_is_found_when_it_is_word_for_word_in_what_was_judged() -> None:
    judged = [*quotes.iteration_texts(iteration()), "== Fundamentals\n- [MICRO] [HIGH] Margins widened."]
    found = quotes.check(_evaluation("“Cash generation funds a cycle the market discounts…”"), judged)
    assert [row.found for row in found] == [True]
    assert quotes.check(_evaluation("margins   widened"), judged)[0].reason.startswith("the quote is shorter")
    missing = quotes.check(_evaluation("the memo says revenue triples next year"), judged)
    assert missing[0].reason == "the quote is not in the memo's iterations or the specialists' briefs"


def test_a_score_resting_on_a_quote_that_is_not_there_does_not_count() -> None:
    drafted = iteration(jplus=10, jminus=0)  # source_anchored self-scored 2
    evaluation = _evaluation("the memo says revenue triples next year", jplus=4)  # source_anchored 0
    checked = quotes.check(evaluation, quotes.iteration_texts(drafted))
    verdict = decide([drafted], evaluation, checked)
    assert verdict.uncounted == ["iteration 1 · source_anchored"]
    # The self-score stands for that dimension: 4 calibrated plus the 2 the evaluator could not support.
    assert verdict.calibrated_jplus == 6
    assert "1 score without a verbatim quote did not count" in verdict.reason
    supported = _evaluation("Cash generation funds a cycle", jplus=4)
    kept = decide([drafted], supported, quotes.check(supported, quotes.iteration_texts(drafted)))
    assert (kept.calibrated_jplus, kept.uncounted) == (4, [])


# --- the escape valve: stop as soon as the thresholds are met


def _check(number: int, current: Any, previous: Any | None) -> hillclimb.HillClimbCheck:
    base = None if previous is None else (previous.self_jplus, previous.self_jminus)
    return hillclimb.check(number, current.self_jplus, current.self_jminus, base)


def test_the_synthesis_stops_after_an_iteration_that_clears_every_threshold() -> None:
    first = iteration(jplus=6, jminus=3)
    second = iteration(
        jplus=8,
        jminus=1,
        meso="Peers now set the bar on pricing.",
        answered=[
            _answer(1, "addressed", "meso"),
            _answer(2, "out_of_scope", "macro"),
            _answer(3, "out_of_scope", "risk_budget"),
        ],
    )
    rows = gaps.check(first, second)
    stop = escape.check(2, 3, second, _check(2, second, first), rows)
    assert stop.stop and "thresholds met after iteration 2 of 3" in stop.reason
    # A first iteration never stops the synthesis, whatever it claims.
    perfect = iteration(jplus=10, jminus=0)
    assert not escape.check(1, 3, perfect, _check(1, perfect, None), []).stop
    # The last planned iteration has nothing left to skip.
    assert escape.check(3, 3, second, _check(3, second, first), rows).reason.startswith("this is the last")


def test_the_synthesis_goes_on_when_a_gap_is_unanswered_or_the_scores_fall_short() -> None:
    first = iteration(jplus=6, jminus=3)
    silent = iteration(jplus=8, jminus=1, meso="Peers now set the bar on pricing.")
    go_on = escape.check(2, 3, silent, _check(2, silent, first), gaps.check(first, silent))
    assert not go_on.stop and "left gaps of the previous iteration unanswered" in go_on.reason
    # Self-scores less the inflation prior: J+ 7 - 3 = 4 is short of the verdict's 5.
    short = iteration(jplus=7, jminus=1)
    assert "J+ less the inflation prior is 4" in escape.check(2, 3, short, _check(2, short, first), []).reason
