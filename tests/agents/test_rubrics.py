"""Rubrics as data (agents.rubrics): the seed files parse, every problem is refused by name, and the memo's
composites and thresholds come from the rubric, so a changed weight or bar changes what code decides."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents.deck.rubrics import DECK_R1, DECK_R2, R1_CONTRACT, R2_CONTRACT
from agents.memo import escape, hillclimb
from agents.memo.rubric import MEMO_CONTRACT, MEMO_RUBRIC, MemoRubric, seed_rubric
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, JMinusScores, JPlusScores
from agents.rubrics import Contract, Rubric, RubricError, parse_rubric
from tests.agents.memo.answers import iteration

RUBRICS = Path(__file__).resolve().parents[2] / "prompts" / "rubrics"
CONTRACTS: dict[str, Contract] = {MEMO_RUBRIC: MEMO_CONTRACT, DECK_R1: R1_CONTRACT, DECK_R2: R2_CONTRACT}


def _seed(name: str) -> dict[str, object]:
    data = yaml.safe_load((RUBRICS / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _parse(data: dict[str, object]) -> Rubric:
    return parse_rubric(
        yaml.safe_dump(data).encode(), origin="test", contract=CONTRACTS.get(str(data["name"]))
    )


def _scores(plus: list[int], minus: list[int]) -> tuple[JPlusScores, JMinusScores]:
    return (
        JPlusScores.model_validate(dict(zip(JPLUS_DIMENSIONS, plus, strict=True))),
        JMinusScores.model_validate(dict(zip(JMINUS_DIMENSIONS, minus, strict=True))),
    )


def test_every_rubric_file_parses_and_meets_its_contract() -> None:
    parsed = {p: parse_rubric(p.read_bytes(), origin=str(p)) for p in RUBRICS.glob("*.yaml")}
    for path, rubric in parsed.items():
        parse_rubric(path.read_bytes(), origin=str(path), contract=CONTRACTS[rubric.name])
    assert {rubric.name for rubric in parsed.values()} == {MEMO_RUBRIC, DECK_R1, DECK_R2}


def test_seed_001s_weights_bars_and_gates_are_data() -> None:
    r1 = parse_rubric((RUBRICS / "deck_r1.yaml").read_bytes(), origin="r1")
    r2 = parse_rubric((RUBRICS / "deck_r2.yaml").read_bytes(), origin="r2")
    assert r1.objective("composite").weights() == {
        "thesis_clarity": 0.30,
        "coverage_depth": 0.25,
        "narrative_flow": 0.20,
        "visual_baseline": 0.15,
        "actionability": 0.10,
    }
    assert r1.thresholds["entry_bar"] == 3.2 and len(r1.gates) == 3
    assert r2.objective("composite").weights() == {
        "actionability": 0.25,
        "executive_altitude": 0.20,
        "visual_digestibility": 0.20,
        "clean_concise_story": 0.20,
        "metric_traceability": 0.15,
    }
    assert (r2.thresholds["ship_bar"], r2.thresholds["min_improvement"]) == (4.3, 0.15)
    assert {g.key for g in r2.gates} == {"truth", "scope_adherence", "story_integrity", "visual_integrity"}
    # R2 = 0.25 Action + 0.20 Exec + 0.20 Visual + 0.20 Story + 0.15 Trace, on the 0-5 scale
    scores = {"actionability": 4, "executive_altitude": 5, "visual_digestibility": 3}
    scores |= {"clean_concise_story": 4, "metric_traceability": 5}
    assert r2.composite("composite", scores) == pytest.approx(
        0.25 * 4 + 0.2 * 5 + 0.2 * 3 + 0.2 * 4 + 0.15 * 5
    )


def test_the_memo_rubric_file_holds_seed_000s_anchors_and_thresholds() -> None:
    rules = seed_rubric()
    jplus = rules.rubric.objective("jplus")
    assert [d.key for d in jplus.dimensions] == list(JPLUS_DIMENSIONS)
    assert jplus.dimensions[0].anchors[2].startswith("Falsifiable mechanism")
    assert (rules.accept_min_jplus, rules.accept_max_jminus) == (5, 4)
    assert (rules.min_jplus_gain, rules.max_jminus_change) == (1.5, -1)
    plus, minus = _scores([2, 1, 2, 1, 0], [0, 1, 0, 2, 1])
    assert (rules.jplus(plus), rules.jminus(minus)) == (6, 4)  # equal weights: the plain sums


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["objectives"][0]["dimensions"][0].update(weight=0.3), "sum to 1.1, not 1"),
        (lambda d: d["objectives"][0]["dimensions"].pop(), "sum to 0.8, not 1"),
        (
            lambda d: d["objectives"][0]["dimensions"][0].update(key="insight"),
            "missing causal_mechanism; unknown insight",
        ),
        (lambda d: d["thresholds"].pop("accept_min_jplus"), "accept_min_jplus are missing"),
        (
            lambda d: d["objectives"][1]["dimensions"][0]["anchors"].update({7: "off"}),
            "outside the scale 0-2",
        ),
        (lambda d: d.update(scale="0-2"), "scale: Input should be a valid dictionary"),
        (lambda d: d.update(extra_field=1), "extra_field: Extra inputs are not permitted"),
    ],
)
def test_a_broken_rubric_is_refused_naming_the_problem(change: object, problem: str) -> None:
    data = _seed(MEMO_RUBRIC)
    change(data)  # type: ignore[operator]
    with pytest.raises(RubricError, match=r"^test: ") as refused:
        _parse(data)
    assert problem in str(refused.value)


def test_yaml_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(RubricError, match="YAML mapping"):
        parse_rubric(b"- just\n- a list\n", origin="test")
    with pytest.raises(RubricError, match="not valid YAML"):
        parse_rubric(b"name: [unclosed\n", origin="test")


def test_a_changed_weight_changes_the_composite_code_computes() -> None:
    data = _seed(MEMO_RUBRIC)
    weights = [0.4, 0.3, 0.1, 0.1, 0.1]
    for dimension, weight in zip(data["objectives"][0]["dimensions"], weights, strict=True):  # type: ignore[index]
        dimension["weight"] = weight
    rules = MemoRubric(_parse(data))
    plus, minus = _scores([2, 2, 0, 0, 0], [1, 1, 1, 1, 1])
    assert seed_rubric().jplus(plus) == 4
    assert rules.jplus(plus) == 7  # 10 * (0.4*2 + 0.3*2) / 2
    assert rules.jminus(minus) == 5


def test_the_hill_climb_and_the_escape_valve_read_the_rubrics_thresholds() -> None:
    data = _seed(MEMO_RUBRIC)
    data["thresholds"] |= {"hill_climb_min_jplus_gain": 4, "accept_min_jplus": 8}  # type: ignore[operator]
    strict = MemoRubric(_parse(data))
    before, after = _scores([1, 1, 1, 0, 0], [2, 2, 1, 1, 1]), _scores([2, 2, 1, 1, 0], [1, 1, 1, 1, 0])
    assert hillclimb.check(2, *after, before).passed  # +3 / -3 against the seed's +1.5 / -1
    failed = hillclimb.check(2, *after, before, rubric=strict)
    assert not failed.passed and "J+ moved +3, needs at least +4" in failed.reason
    final = iteration(jplus=6, jminus=4)
    passed = hillclimb.check(2, *after, before)
    assert escape.check(2, 3, final, passed, []).reason.startswith(
        "J+ less the inflation prior is 3, below 5"
    )
    assert "below 8" in escape.check(2, 3, final, passed, [], rubric=strict).reason
