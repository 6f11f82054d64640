"""A workflow's prompts a model server may read before any run (agents.llm.warm, ``manage.py warm_model``):
each one's system text, for the role that asks it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agents.llm.errors import PromptError
from agents.llm.warm import WarmPrompt
from memos.models import Run
from memos.pipeline.prompts import template


def warm_prompt(run: Run, name: str, role: str, values: Mapping[str, str] | None = None) -> WarmPrompt | None:
    """Prompt ``name``'s system text as ``run`` pinned it, for the ``role`` code asks it as. None when its
    system section needs what only a brief has (an admin's version with a company's name in it): such a
    text begins no two companies' calls alike."""
    try:
        return WarmPrompt(role=role, name=name, system=template(name, run).system_text(values))
    except PromptError:
        return None


def warm_asked(run: Run, asked: Iterable[tuple[str, str]]) -> list[WarmPrompt]:
    """Each (prompt name, role) of ``asked`` that can be warmed (``warm_prompt``), in order."""
    return [found for name, role in asked if (found := warm_prompt(run, name, role)) is not None]
