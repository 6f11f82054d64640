"""Every level of the memo's and the deck's rubrics carries its descriptor and a quoted example a judge
compares against (seed 000: "each score level has a quoted example, not just an adjective"; seed 001:
"concrete descriptors at each scale point"); a rubric with a bare level is refused by name, and the examples
reach the evaluator's prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents.deck.rubrics import DECK_R1, DECK_R2, R1_CONTRACT, R2_CONTRACT
from agents.llm.prompts import load_prompt
from agents.memo.prompt_terms import ANCHORS, missing_terms
from agents.memo.rubric import MEMO_CONTRACT, MEMO_RUBRIC, anchor_examples, anchors_text, seed_rubric
from agents.rubrics import Contract, RubricError, parse_rubric

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = ROOT / "prompts" / "rubrics"
CONTRACTS: dict[str, Contract] = {MEMO_RUBRIC: MEMO_CONTRACT, DECK_R1: R1_CONTRACT, DECK_R2: R2_CONTRACT}


@pytest.mark.parametrize(
    ("name", "levels"),
    [(MEMO_RUBRIC, [0, 1, 2]), (DECK_R1, [0, 1, 2, 3, 4, 5]), (DECK_R2, [0, 1, 2, 3, 4, 5])],
)
def test_every_level_of_the_shipped_rubrics_has_its_descriptor_and_a_quoted_example(
    name: str, levels: list[int]
) -> None:
    path = RUBRICS / f"{name}.yaml"
    rubric = parse_rubric(path.read_bytes(), origin=str(path), contract=CONTRACTS[name])
    examples = []
    for objective in rubric.objectives:
        for dimension in objective.dimensions:
            assert sorted(dimension.anchors) == levels and sorted(dimension.examples) == levels, dimension.key
            examples += list(dimension.examples.values())
    # Real sentences, each its own: no example copied across levels or dimensions, none a bare adjective.
    assert len(set(examples)) == len(examples)
    assert all(len(example.split()) >= 6 for example in examples)


def _without(name: str, dimension: str, level: int, field: str) -> bytes:
    data = yaml.safe_load((RUBRICS / f"{name}.yaml").read_text(encoding="utf-8"))
    for objective in data["objectives"]:
        for found in objective["dimensions"]:
            if found["key"] == dimension:
                del found[field][level]
    return yaml.safe_dump(data).encode()


@pytest.mark.parametrize(
    ("name", "dimension", "level", "field", "message"),
    [
        (
            MEMO_RUBRIC,
            "named_catalyst",
            1,
            "examples",
            "dimension 'named_catalyst' has no quoted example at level 1",
        ),
        (
            DECK_R1,
            "thesis_clarity",
            0,
            "examples",
            "dimension 'thesis_clarity' has no quoted example at level 0",
        ),
        (
            DECK_R2,
            "executive_altitude",
            4,
            "anchors",
            "dimension 'executive_altitude' has no anchor at level 4",
        ),
    ],
)
def test_a_rubric_with_an_unanchored_level_is_refused_naming_the_dimension_and_level(
    name: str, dimension: str, level: int, field: str, message: str
) -> None:
    with pytest.raises(RubricError) as refused:
        parse_rubric(
            _without(name, dimension, level, field), origin=f"rubric {name}", contract=CONTRACTS[name]
        )
    assert message in str(refused.value)
    assert "needs a descriptor (anchors) and a quoted example a judge compares against" in str(refused.value)


def test_a_version_stored_before_examples_existed_still_reads_back_for_the_runs_that_pinned_it() -> None:
    data = yaml.safe_load((RUBRICS / f"{DECK_R2}.yaml").read_text(encoding="utf-8"))
    for objective in data["objectives"]:
        for dimension in objective["dimensions"]:
            del dimension["examples"]
            dimension["anchors"] = {5: dimension["anchors"][5]}
    raw = yaml.safe_dump(data).encode()
    old = parse_rubric(raw, origin="rubric deck_r2 v1")  # no contract: how a pinned version is read back
    assert old.objective("composite").dimensions[0].examples == {}
    with pytest.raises(RubricError, match="has no anchor at level 0, 1, 2, 3, 4"):
        parse_rubric(raw, origin="rubric deck_r2", contract=R2_CONTRACT)  # but no new version may be like it


def test_a_level_reads_as_its_descriptor_and_its_example_quoted() -> None:
    causal = seed_rubric().rubric.objective("jplus").dimensions[0]
    assert causal.anchor(0) == (
        'Narrative ("they should do well"), e.g. '
        '"Apple is a best-in-class franchise and should keep doing well."'
    )
    assert '- causal_mechanism: 0 Narrative ("they should do well"), e.g. "Apple is' in anchors_text(
        seed_rubric().rubric
    )


def test_the_evaluators_prompt_quotes_every_example_of_the_memo_rubric_it_is_filled_in_with() -> None:
    text = (ROOT / "prompts" / "evaluator.md").read_text(encoding="utf-8")
    evaluator = load_prompt(ROOT / "prompts" / "evaluator.md")
    assert evaluator.name == "evaluator" and "anchors" in evaluator.system_placeholders
    examples = anchor_examples()
    assert len(examples) == 30  # ten dimensions, three levels each
    # The examples are the rubric's, not the prompt's: filled in, every one is quoted.
    assert not any(example in text for example in examples)
    filled = text.replace(ANCHORS, anchors_text(seed_rubric().rubric))
    assert all(example in filled for example in examples)
    assert missing_terms("evaluator", text) == []
    dropped = text.replace(ANCHORS, "")
    assert missing_terms("evaluator", dropped) == [ANCHORS]  # the admin refuses a version without them
