"""Cross-run drift by code: a recommendation that flipped or changed, a sizing that moved, evidence that fell
a tier, and a load-bearing figure that moved or was restated, each with both sides quoted; a memo that says
the same thing again shows no drift."""

from __future__ import annotations

from dataclasses import replace

from agents.memo.drift import MemoSide, drift

REVENUE_2024 = {"id": "AAPL:revenue:FY2024", "label": "Revenue", "period": "FY 2024", "value": "$391.04B"}
REVENUE_2025 = {"id": "AAPL:revenue:FY2025", "label": "Revenue", "period": "FY 2025", "value": "$416.16B"}
CASH = {"id": "AAPL:cash:FY2024", "label": "Cash", "period": "FY 2024", "value": "$29.94B"}

V1 = MemoSide(
    label="v1",
    recommendation="BUY",
    sizing="half",
    thesis="Services growth carries the margin.",
    tiers={"AAPL:revenue:FY2024": "HIGH", "AAPL:cash:FY2024": "HIGH"},
    load_bearing=["AAPL:revenue:FY2024", "AAPL:cash:FY2024"],
    facts={"AAPL:revenue:FY2024": REVENUE_2024, "AAPL:cash:FY2024": CASH},
)


def test_the_same_memo_again_shows_no_drift() -> None:
    assert drift(V1, replace(V1, label="v2")) == []


def test_a_buy_that_became_a_sell_is_a_flip_with_both_theses_quoted() -> None:
    v2 = replace(
        V1, label="v2", recommendation="SELL", sizing="none", thesis="Hardware demand is rolling over."
    )
    (found,) = drift(V1, v2)
    assert found.kind == "flipped"
    assert found.what == "The recommendation flipped from BUY (v1) to SELL (v2)."
    assert found.before == "BUY, sizing half: Services growth carries the margin."
    assert found.after == "SELL, sizing none: Hardware demand is rolling over."
    (held,) = drift(V1, replace(v2, recommendation="HOLD"))
    assert held.kind == "recommendation" and "changed from BUY (v1) to HOLD (v2)" in held.what


def test_the_same_recommendation_sized_down_is_said_with_both_sizes() -> None:
    (found,) = drift(V1, replace(V1, label="v2", sizing="starter"))
    assert found.kind == "sizing" and found.what == "The same BUY is sized down: half (v1) to starter (v2)."


def test_evidence_that_fell_a_tier_is_flagged_at_the_weakest_link_and_by_id() -> None:
    v2 = replace(V1, label="v2", tiers={"AAPL:revenue:FY2024": "HIGH", "AAPL:cash:FY2024": "LOW"})
    weakest, by_id = drift(V1, v2)
    assert weakest.kind == by_id.kind == "tier"
    assert weakest.what.startswith("The recommendation now rests on LOW-tier evidence at its weakest")
    assert weakest.what.endswith("v1 rested on HIGH at the weakest.")
    assert weakest.after == "weakest LOW: AAPL:cash:FY2024"
    assert by_id.what == "AAPL:cash:FY2024 fell from HIGH to LOW."


def test_a_load_bearing_figure_that_moved_or_was_restated_is_quoted_with_its_period() -> None:
    newer = replace(
        V1,
        label="v2",
        tiers={"AAPL:revenue:FY2025": "HIGH", "AAPL:cash:FY2024": "HIGH"},
        load_bearing=["AAPL:revenue:FY2025", "AAPL:cash:FY2024"],
        facts={"AAPL:revenue:FY2025": REVENUE_2025, "AAPL:cash:FY2024": CASH},
    )
    (moved,) = drift(V1, newer)
    assert moved.kind == "figure"
    assert moved.what == "Revenue moved: v1 rested on FY 2024, v2 on FY 2025."
    assert moved.before == "Revenue (FY 2024): $391.04B [AAPL:revenue:FY2024]"
    assert moved.after == "Revenue (FY 2025): $416.16B [AAPL:revenue:FY2025]"

    restated = replace(V1, label="v2", facts={**V1.facts, "AAPL:cash:FY2024": {**CASH, "value": "$31.20B"}})
    (found,) = drift(V1, restated)
    assert found.what == "Cash was restated: the same period's figure, another value."
    assert (found.before, found.after) == (
        "Cash (FY 2024): $29.94B [AAPL:cash:FY2024]",
        "Cash (FY 2024): $31.20B [AAPL:cash:FY2024]",
    )
