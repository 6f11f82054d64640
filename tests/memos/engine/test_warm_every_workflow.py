"""Every workflow's warm prompts (``Workflow.warm_prompts``, read by ``manage.py warm_model``): each is the
system text its role's calls begin with, sent for the role that asks it, and holds nothing of a run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.llm.warm import WarmPrompt
from memos.models import Run
from memos.pipeline import driver
from memos.pipeline.registry import workflow_for
from memos.services.runs import ask_watchlist
from tests.memos.deck_support import deck_run, fake_deck_llm
from tests.memos.pipeline_support import analyst, fake_llm

pytestmark = pytest.mark.django_db(transaction=True)


def begins_every_call(warm: Sequence[WarmPrompt], sent: list[dict[str, Any]], run: Run) -> set[str]:
    """The warm prompts' names the run asked; fails on a call that does not begin with its warm text."""
    by_name = {prompt.name: prompt for prompt in warm}
    asked = set()
    for entry in sent:
        prompt = by_name.get(entry["prompt_name"])
        if prompt is None:
            continue
        asked.add(prompt.name)
        assert entry["role"] == prompt.role, prompt.name
        assert entry["body"]["messages"][0]["content"].startswith(prompt.system), prompt.name
        assert run.nonce not in prompt.system and run.brief.question not in prompt.system
    return asked


def test_a_decks_calls_begin_with_its_warm_texts() -> None:
    run = deck_run("quick")
    with fake_deck_llm() as server:
        driver.run_inline(str(run.pk))
        sent = server.requests
    warm = workflow_for("deck").warm_prompts(run)
    judges = ["deck_gate", "deck_scorer"]
    names = ["deck_scope", "deck_framing", "deck_drafter", *judges, "deck_planner", "deck_reviser"]
    assert [p.name for p in warm] == names
    # The judges' system texts hold the pinned rubric, every anchor: the same for every deck until an admin
    # saves another version, so the R1 gate and the first R2 score read them from the cache.
    assert begins_every_call(warm, sent, run) >= {"deck_scope", "deck_framing", "deck_drafter", *judges}
    assert all("Rubric (" in p.system and "5: " in p.system for p in warm if p.name in judges)


def test_a_screens_calls_begin_with_its_warm_texts() -> None:
    run = ask_watchlist(
        owner=User.objects.filter(username="ana").first() or analyst(),
        symbols=["XOM", "CVX", "DUK", "NEE"],
        question="Which symbols moved on their own this week?",
        workflow="screen",
        profile="weekly",
        enqueue=False,
    )
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        sent = server.requests
    warm = workflow_for("screen").warm_prompts(run)
    assert begins_every_call(warm, sent, run) >= {
        "screen_news_overview",
        "screen_news_sector",
        "screen_senior_sector",
        "screen_senior_overall",
        "screen_director",
    }
