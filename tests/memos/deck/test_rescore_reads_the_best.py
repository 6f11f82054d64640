"""T11's re-score of the unchanged best (seed 001) is the scorer's own prompt of that deck with one line of
the desk's after it: the judge reads the same instructions (drift is the judge's alone), and a model server
that kept the best deck's scoring reads only that line again. A quick deck runs one lap of the loop."""

from __future__ import annotations

import pytest

from agents.deck.outputs import LapOutput
from memos.models import AgentStep
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_rescore_is_the_best_decks_scoring_and_one_line_more() -> None:
    run = deck_run("quick")
    with fake_deck_llm() as server:
        driver.run_inline(str(run.pk))
        sent = server.requests
    scorings = [e["body"]["messages"] for e in sent if e["prompt_name"] == "deck_scorer"]
    rescores = [e["body"]["messages"] for e in sent if e["prompt_name"] == "deck_rescore"]
    steps = AgentStep.objects.filter(run=run, kind="lap", status="done")
    laps = [LapOutput.model_validate(step.output) for step in steps]
    assert len(laps) == 1 and len(rescores) == 1  # the quick profile's one lap
    baseline, rescore = scorings[0], rescores[0]  # lap 1 re-scores the baseline, the best so far
    assert rescore[0]["content"] == baseline[0]["content"]
    assert rescore[1]["content"].startswith(baseline[1]["content"])
    tail = rescore[1]["content"][len(baseline[1]["content"]) :]
    assert tail.strip().startswith("This is consistency check 1") and len(tail) < 160
    # And the lap's candidate is scored by the same prompt: not a prefix of its own re-score.
    candidate = scorings[1]
    assert candidate[0]["content"] == baseline[0]["content"]
    assert not rescore[1]["content"].startswith(candidate[1]["content"])
