"""The agent roles that call the LLM; each may have its own endpoint (``LLM_MODEL_<ROLE>`` and friends)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    FUNDAMENTALS = "fundamentals"
    COMPETITIVE = "competitive"
    MACRO = "macro"
    REGULATORY = "regulatory"
    QUANT = "quant"
    NEWS = "news"
    SYNTHESIZER = "synthesizer"
    EVALUATOR = "evaluator"
    # A second evaluator of the memo, asked beside the first where it is configured on another model; code
    # keeps the more conservative verdict of the two (memos.pipeline.memo.evaluation).
    SECOND_EVALUATOR = "second_evaluator"
    # The deck (seed 001 section 6b): the scorer is the judge, configured apart from the drafter and reviser.
    SCOPE_BUILDER = "scope_builder"
    RUBRIC_BUILDER = "rubric_builder"
    DRAFTER = "drafter"
    SCORER = "scorer"
    PLANNER = "planner"
    REVISER = "reviser"
    # The consulting agency (seed 004): generators, then the verdict, which seed 003 puts on another family.
    INFERENCE = "inference"
    ANALYST = "analyst"
    CRITIC = "critic"
    BOARD = "board"
    SCORING = "scoring"
    JURY = "jury"
    # The sector screen (seed 002): the news analyst and the senior analyst generate; the managing director
    # reviews, on another family where one is configured (seed 003).
    NEWS_ANALYST = "news_analyst"
    SENIOR_ANALYST = "senior_analyst"
    MANAGING_DIRECTOR = "managing_director"


ALL_ROLES: tuple[Role, ...] = tuple(Role)


# The roles whose answers are verdicts on other roles' work: the memo's evaluators, the deck's scorer (its
# judge and its gate), the board's scores, the jury and the screen's managing director. ``LLM_JUDGE_MODEL``
# puts them all on the judge model (agents.llm.config); seed 003 never fans one out across clones of one
# model (memos.pipeline.fanout).
VERDICT_ROLES: frozenset[Role] = frozenset(
    {
        Role.EVALUATOR,
        Role.SECOND_EVALUATOR,
        Role.SCORER,
        Role.SCORING,
        Role.JURY,
        Role.MANAGING_DIRECTOR,
    }
)
