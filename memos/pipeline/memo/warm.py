"""The memo's prompts a model server may read before any brief (agents.llm.warm): the system text of every
role a memo asks, in the order a person's first memo needs them."""

from __future__ import annotations

from agents.llm.roles import Role
from agents.llm.warm import WarmPrompt
from agents.memo.roster import QUICK
from memos.models import Run
from memos.pipeline.gateway import second_evaluator
from memos.pipeline.memo.evaluation import anchors
from memos.pipeline.memo.settings import memo_settings
from memos.pipeline.prompts import template
from memos.pipeline.warming import warm_asked, warm_prompt


def warm_prompts(run: Run) -> list[WarmPrompt]:
    """The quick profile's specialists (the walk-through's memo), the synthesizer and the evaluators, then
    every other specialist a profile names. ``run`` pins the versions (a new run's: what it would start
    with)."""
    profiles = memo_settings().profiles
    quick = list(profiles[QUICK].roster) if QUICK in profiles else []
    others = dict.fromkeys(name for p in profiles.values() for name in p.roster if name not in quick)
    graded = anchors(template("evaluator", run), run)
    judges = [Role.EVALUATOR] + ([Role.SECOND_EVALUATOR] if second_evaluator() is not None else [])
    evaluators = [warm_prompt(run, "evaluator", str(role), graded) for role in judges]
    return [
        *warm_asked(run, [(f"specialist_{name}", name) for name in quick]),
        *warm_asked(run, [("synthesizer", "synthesizer")]),
        *(found for found in evaluators if found is not None),
        *warm_asked(run, [(f"specialist_{name}", name) for name in others]),
    ]
