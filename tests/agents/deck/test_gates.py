"""Seed 001 sections 3-5 as code: the R1 gate, R2's invariants, accept/reject, drift and stop, on the
governed rubric files (so a retuned threshold moves these results, not the code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.deck.gates import Measured, Scored, decide, drifted, r1_result, stop_reason
from agents.deck.schemas import R1Judgement
from agents.rubrics import Rubric, parse_rubric

RUBRICS = Path(__file__).resolve().parents[3] / "prompts" / "rubrics"
IMPROVEMENT = (
    "actionability",
    "executive_altitude",
    "visual_digestibility",
    "clean_concise_story",
    "metric_traceability",
)


def _rubric(name: str) -> Rubric:
    path = RUBRICS / f"{name}.yaml"
    return parse_rubric(path.read_bytes(), origin=str(path))


def _measured(**changes: object) -> Measured:
    base: dict[str, object] = {
        "figures": 12,
        "mismatches": 0,
        "unresolved_ids": 0,
        "missing_sections": [],
        "broken": [],
        "walls_of_text": 0,
        "chart_figures": 6,
        "humanizer": 0,
    }
    return Measured.model_validate(base | changes)


def _scored(composite: float, *, protected: int = 4, **measured: object) -> Scored:
    scores = dict.fromkeys(IMPROVEMENT, 3) | dict.fromkeys(
        ("scope_adherence", "story_integrity", "visual_integrity"), protected
    )
    return Scored(scores=scores, composite=composite, measured=_measured(**measured))


R2 = _rubric("deck_r2")


def test_a_candidate_ten_points_better_is_rejected_and_twenty_points_better_is_accepted() -> None:
    best = _scored(3.50)
    assert not decide(R2, _scored(3.60), best).accepted
    assert decide(R2, _scored(3.70), best).accepted


def test_a_protected_drop_beyond_tau_is_rejected_despite_a_higher_composite() -> None:
    decision = decide(R2, _scored(4.20, protected=3), _scored(3.50, protected=4))
    assert not decision.accepted
    assert any("protected regression" in reason for reason in decision.reasons)


def test_any_fact_mismatch_is_rejected_whatever_the_scores() -> None:
    decision = decide(R2, _scored(4.9, mismatches=1), _scored(3.0))
    assert not decision.accepted and decision.reasons[0].startswith("truth")


def test_a_removed_chart_or_a_new_wall_of_text_breaks_visual_integrity() -> None:
    assert not decide(R2, _scored(4.0, chart_figures=3), _scored(3.0)).accepted
    assert not decide(R2, _scored(4.0, walls_of_text=1), _scored(3.0)).accepted


def test_judge_drift_blocks_acceptance_that_lap() -> None:
    recorded = dict.fromkeys(IMPROVEMENT, 3)
    drift = drifted(R2, recorded, recorded | {"actionability": 5})
    assert drift == ["actionability 3 -> 5"]
    assert not decide(R2, _scored(4.0), _scored(3.0), drift=drift).accepted
    assert drifted(R2, recorded, recorded | {"actionability": 4}) == []  # within the tolerance of 1


def test_fresh_data_rebaselines_even_when_the_score_falls_but_never_past_a_mismatch() -> None:
    assert decide(R2, _scored(2.5), _scored(3.5), new_epoch=True).accepted
    assert not decide(R2, _scored(4.5, mismatches=2), _scored(3.5), new_epoch=True).accepted


@pytest.mark.parametrize(
    ("best", "without", "laps", "reason"),
    [(4.3, 0, 1, "ship"), (3.0, 3, 3, "plateau"), (3.0, 0, 8, "max_laps"), (3.0, 2, 2, "")],
)
def test_the_loop_stops_at_the_ship_bar_on_a_plateau_or_at_the_lap_limit(
    best: float, without: int, laps: int, reason: str
) -> None:
    assert stop_reason(R2, best, without, laps, 8) == reason


def test_r1_needs_every_hard_gate_and_the_entry_bar() -> None:
    r1 = _rubric("deck_r1")

    def judged(score: int) -> R1Judgement:
        dims = ("thesis_clarity", "coverage_depth", "narrative_flow", "visual_baseline", "actionability")
        return R1Judgement.model_validate(
            {
                "scores": [{"dimension": d, "score": score, "evidence": "x"} for d in dims],
                "weakest": [{"slide": 1, "dimension": "thesis_clarity", "problem": "x"}],
            }
        )

    assert r1_result(r1, _measured(), judged(4)).passed
    assert not r1_result(r1, _measured(), judged(3)).passed  # 3.0 < 3.2
    failed = r1_result(r1, _measured(missing_sections=["Risks"]), judged(5))
    assert not failed.passed and [g.key for g in failed.gates if not g.passed] == ["scope_coverage"]
    assert not r1_result(r1, _measured(unresolved_ids=1), judged(5)).passed
