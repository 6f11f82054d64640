"""A falsifier's binding is a metric and a condition from closed lists, never a number; code keeps, compares
and evaluates it (agents.memo.falsifiers)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from agents.data.edgar.derived import DERIVED_METRICS
from agents.data.edgar.metrics import METRICS_BY_NAME
from agents.llm.schema import strict_json_schema
from agents.memo import falsifiers
from agents.memo.falsifiers import Reading, comparable, met
from agents.memo.schemas import FalsifierBinding, MemoDraft, WatchedMetric
from agents.quant.profile import UNITS
from tests.agents.memo.answers import iteration

FY2025 = Reading("AAPL:revenue_growth_yoy:FY2025", Decimal("0.0642551178"), date(2025, 9, 27), "FY")


def memo_with(bindings: list[dict[str, Any]], falsifiers_: int = 2) -> MemoDraft:
    memo = iteration().memo.model_dump()
    memo["falsifiers"] = [f"Falsifier number {n}." for n in range(1, falsifiers_ + 1)]
    memo["falsifier_bindings"] = bindings
    return MemoDraft.model_validate(memo)


def test_every_watched_metric_is_a_metric_the_data_layer_writes_as_a_fact() -> None:
    produced = set(METRICS_BY_NAME) | set(DERIVED_METRICS) | set(UNITS)
    assert set(get_args(WatchedMetric)) <= produced
    assert set(UNITS) >= falsifiers.MARKET_METRICS


def test_a_binding_holds_a_metric_and_a_condition_from_closed_lists_and_no_number() -> None:
    schema = strict_json_schema(FalsifierBinding)
    assert set(schema["properties"]) == {"falsifier", "metric", "condition"}
    assert schema["properties"]["metric"]["enum"] == list(get_args(WatchedMetric))
    assert set(schema["properties"]["condition"]["enum"]) == set(falsifiers.CONDITIONS)
    assert (schema["properties"]["falsifier"]["minimum"], schema["properties"]["falsifier"]["maximum"]) == (
        1,
        3,
    )
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    "binding",
    [
        {
            "falsifier": 1,
            "metric": "share_price",
            "condition": "falls_below_current",
        },  # not a fact-store metric
        {"falsifier": 1, "metric": "revenue", "condition": "falls_below_5_percent"},  # not a condition
        {"falsifier": 1, "metric": "revenue", "condition": "falls_below_current", "threshold": 0.05},
        {"falsifier": 4, "metric": "revenue", "condition": "turns_negative"},  # past the most falsifiers
        {"falsifier": 0, "metric": "revenue", "condition": "turns_negative"},
    ],
)
def test_the_schema_refuses_a_binding_outside_the_closed_lists(binding: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        memo_with([binding])


def test_an_answer_without_bindings_still_reads() -> None:
    memo = iteration().memo.model_dump()
    memo.pop("falsifier_bindings", None)
    assert MemoDraft.model_validate(memo).falsifier_bindings == []


def test_code_keeps_a_binding_that_names_a_falsifier_and_a_metric_with_a_fact() -> None:
    memo = memo_with(
        [
            {"falsifier": 2, "metric": "revenue_growth_yoy", "condition": "turns_negative"},
            {"falsifier": 3, "metric": "revenue", "condition": "falls_below_current"},
            {"falsifier": 1, "metric": "cash", "condition": "falls_below_current"},
        ]
    )
    kept, dropped = falsifiers.check(memo, {"revenue_growth_yoy": FY2025, "cash": None, "revenue": FY2025})
    assert [(b.falsifier, b.metric) for b in kept] == [(2, "revenue_growth_yoy")]
    assert [d.reason for d in dropped] == [
        "the fact store holds no cash for this company",
        "the memo has 2 falsifiers; there is no falsifier 3",
    ]


def test_code_keeps_the_first_binding_of_a_falsifier_bound_twice() -> None:
    memo = memo_with(
        [
            {"falsifier": 2, "metric": "revenue_growth_yoy", "condition": "turns_negative"},
            {"falsifier": 2, "metric": "revenue", "condition": "falls_below_current"},
        ]
    )
    kept, dropped = falsifiers.check(memo, {"revenue_growth_yoy": FY2025, "revenue": FY2025})
    assert [(b.falsifier, b.metric) for b in kept] == [(2, "revenue_growth_yoy")]
    assert [(d.binding.metric, d.reason) for d in dropped] == [
        ("revenue", "falsifier 2 is already bound: one condition each")
    ]


def test_code_drops_a_binding_to_a_metric_its_falsifier_does_not_speak_of() -> None:
    # A fresh desk's 1.5B: a falsifier about beta bound to capex falling.
    memo = memo_with(
        [
            {"falsifier": 1, "metric": "capex", "condition": "falls_below_current"},
            {"falsifier": 2, "metric": "gross_margin", "condition": "falls_below_current"},
            {"falsifier": 3, "metric": "revenue", "condition": "falls_below_current"},
        ],
        falsifiers_=3,
    ).model_copy(
        update={
            "falsifiers": [
                "AAPL's beta is lower than the market, so its risk is higher than the market's.",
                "If [[AAPL:gross_margin:FY2025]] slips, the thesis is wrong.",  # a cited figure names it
                "If the services story breaks, the thesis is wrong.",  # no metric named: not judged
            ]
        }
    )
    readings = {metric: FY2025 for metric in ("capex", "gross_margin", "revenue")}
    kept, dropped = falsifiers.check(memo, readings)
    assert [(b.falsifier, b.metric) for b in kept] == [(2, "gross_margin"), (3, "revenue")]
    assert [d.reason for d in dropped] == [
        "falsifier 1 is about beta, not capex: a binding watches what its falsifier says"
    ]
    # The words name the bound metric: kept (a generic word backs every metric it may mean).
    binding = memo.falsifier_bindings[0]
    for words, metric in (
        ("Gross margin contracts next quarter.", "gross_margin"),
        ("Margins shrink.", "net_margin"),
    ):
        assert falsifiers.off_topic(binding.model_copy(update={"metric": metric}), words) == ""


def test_code_drops_a_condition_that_cannot_apply() -> None:
    session = Reading("AAPL:return_ytd:2017-09-01", Decimal("0.3"), date(2017, 9, 1), "DAY")
    memo = memo_with(
        [
            {"falsifier": 1, "metric": "return_ytd", "condition": "falls_below_current"},
            {"falsifier": 2, "metric": "revenue_growth_yoy", "condition": "turns_positive"},
        ]
    )
    kept, dropped = falsifiers.check(memo, {"return_ytd": session, "revenue_growth_yoy": FY2025})
    assert kept == []
    assert [d.reason for d in dropped] == [
        "return_ytd moves every session: only a change of its sign is watched",
        "revenue_growth_yoy is already positive (AAPL:revenue_growth_yoy:FY2025)",
    ]


def test_conditions_compare_exact_decimals_with_the_frozen_reference() -> None:
    base = Decimal("0.0642551178")
    assert met("falls_below_current", base, Decimal("0.0642551177"))
    assert not met("falls_below_current", base, base)
    assert met("rises_above_current", base, Decimal("0.0642551179"))
    assert met("turns_negative", base, Decimal("-0.0000000001")) and not met(
        "turns_negative", base, Decimal(0)
    )
    assert met("turns_positive", Decimal(-1), Decimal("0.0000000001"))
    with pytest.raises(ValueError, match="unknown condition"):
        met("falls_below_5_percent", base, Decimal(0))


def test_only_a_later_figure_of_the_same_cadence_is_compared_and_quarters_a_year_on_for_levels() -> None:
    q1 = Reading("AAPL:revenue:FY2026Q1", Decimal(143), date(2025, 12, 27), "Q1")
    q2 = Reading("AAPL:revenue:FY2026Q2", Decimal(95), date(2026, 3, 28), "Q2")
    next_q1 = Reading("AAPL:revenue:FY2027Q1", Decimal(140), date(2026, 12, 26), "Q1")
    fy2026 = Reading("AAPL:revenue:FY2026", Decimal(410), date(2026, 9, 26), "FY")
    assert not comparable("falls_below_current", q1, q2)  # a seasonal quarter is no fall
    assert comparable("falls_below_current", q1, next_q1)
    assert comparable("turns_negative", q1, q2)  # a sign change in any later quarter counts
    assert not comparable("falls_below_current", q1, fy2026)  # a year is not a quarter
    assert comparable("turns_negative", FY2025, Reading("x", Decimal(-1), date(2026, 9, 26), "FY"))
    assert not comparable("turns_negative", FY2025, FY2025)  # not later
