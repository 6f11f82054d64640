"""The rubric's terms each memo prompt must keep (seed 000's "prompt-content tests").

One list for both places that check it: the prompt-content test over the files in ``prompts/``
(tests/agents/memo/test_prompt_contract.py) and the admin, which refuses a new prompt version that loses one
(``memos.services.governance``). Trimming the rubric out of a prompt is the silent regression these catch.
"""

from __future__ import annotations

from agents.memo.roster import SPECIALISTS

ANCHORS = "{anchors}"  # where the evaluator's prompt takes every level's quoted example of the pinned rubric

SYNTHESIZER_TERMS = (
    "causal_mechanism",
    "cross_domain_coupling",
    "named_catalyst",
    "non_consensus",
    "source_anchored",
    "cherry_picking",
    "hedge_then_recommend",
    "narrative_over_numbers",
    "anchoring_to_price",
    "survivorship_in_analogs",
    "Hill-climb rule",
    "at least 1.5",
    "fall by at least 1",
    "what_i_missed",
    "FALSIFIERS",
    "LOW-tier fact cannot be load-bearing",
    "no tools",
    "price target",
)
EVALUATOR_TERMS = (
    "Most competent memos land 5-7",
    "over-graded by 2-3 points",
    "+1 J- discount",
    "anchoring_to_price is at",
    "quoted passage",
    "no tools",
    "Do not decide acceptance",
)
SPECIALIST_TERMS = (
    "MACRO",
    "MESO",
    "MICRO",
    "HIGH",
    "MEDIUM",
    "LOW",
    "coverage_gaps",
    "undercurrents",
    "evidence_quality",
    "Silence",
    "Never write a number",
    "Do not rank, score or judge",
)

# Prompt name (its front matter's ``name``) -> the terms it must contain, verbatim.
REQUIRED_TERMS: dict[str, tuple[str, ...]] = {
    "synthesizer": SYNTHESIZER_TERMS,
    # The evaluator compares a memo with each level's quoted example, filled in from the run's pinned rubric
    # (memos.pipeline.memo.evaluation): a version that drops the placeholder is refused.
    "evaluator": (*EVALUATOR_TERMS, ANCHORS),
    **{f"specialist_{name}": SPECIALIST_TERMS for name in SPECIALISTS},
}


def missing_terms(name: str, text: str) -> list[str]:
    """The required terms of prompt ``name`` that ``text`` lacks (none for a prompt with no list)."""
    return [term for term in REQUIRED_TERMS.get(name, ()) if term not in text]
