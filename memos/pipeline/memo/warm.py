"""The memo's prompts a model server may read before any brief (agents.llm.warm): the system text of every
role a memo asks, in the order a person's first memo needs them."""

from __future__ import annotations

from collections.abc import Mapping

from agents.llm.errors import PromptError
from agents.llm.roles import Role
from agents.llm.warm import WarmPrompt
from memos.models import Run
from memos.pipeline.gateway import second_evaluator
from memos.pipeline.memo.evaluation import anchors
from memos.pipeline.memo.settings import memo_settings
from memos.pipeline.prompts import template

QUICK = "quick"


def warm_prompts(run: Run) -> list[WarmPrompt]:
    """The quick profile's specialists (the walk-through's memo), the synthesizer and the evaluators, then
    every other specialist a profile names. ``run`` pins the versions (a new run's: what it would start
    with). A version whose system section needs a value only a brief has (an admin's edit) is left out."""
    profiles = memo_settings().profiles
    quick = list(profiles[QUICK].roster) if QUICK in profiles else []
    others = [name for p in profiles.values() for name in p.roster if name not in quick]
    evaluator = template("evaluator", run)
    judges = [Role.EVALUATOR] + ([Role.SECOND_EVALUATOR] if second_evaluator() is not None else [])
    asked = [
        *((name, f"specialist_{name}", {}) for name in quick),
        ("synthesizer", "synthesizer", {}),
        *((str(role), "evaluator", anchors(evaluator, run)) for role in judges),
        *((name, f"specialist_{name}", {}) for name in dict.fromkeys(others)),
    ]
    return [found for role, name, values in asked if (found := _warm(run, role, name, values)) is not None]


def _warm(run: Run, role: str, name: str, values: Mapping[str, str]) -> WarmPrompt | None:
    try:
        return WarmPrompt(role=role, name=name, system=template(name, run).system_text(values))
    except PromptError:
        return None
