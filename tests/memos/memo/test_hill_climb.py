"""The hill-climb rewrite path, end to end: scripted self-scores that fail the rule, the real pipeline, the
fake OpenAI-compatible server and what it was asked.

The rehearsal script's self-scores always climb by the thresholds, so only a script that breaks the rule on
purpose reaches the rewrite. Every run here uses the quick roster with three iterations (the profile's
iterations set through ``MEMO_QUICK_ITERATIONS``, as an operator would).
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import Settings

from agents.memo import hillclimb
from agents.memo.outputs import IterationOutput
from agents.memo.roster import load_profiles
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.memo.rehearsal import iteration_answer
from memos.pipeline.memo.settings import MemoSettings
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

# Specialists run on a thread pool with their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Should the committee add to the position ahead of the next product cycle?"
ITERATIONS = 3
FIRST_APERTURE = "Answer the previous iteration's what-I-missed list."


@pytest.fixture
def run(settings: Settings) -> Run:
    profiles = load_profiles({"MEMO_QUICK_ITERATIONS": str(ITERATIONS)})
    settings.WORKFLOW_SETTINGS = {**settings.WORKFLOW_SETTINGS, "memos.pipeline.memo": MemoSettings(profiles)}
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    started = start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")
    assert started.config["iterations"] == ITERATIONS
    return started


def _spread(names: tuple[str, ...], total: int) -> dict[str, int]:
    """``total`` (0-10) over five 0-2 dimensions, first dimensions first."""
    scores = {}
    for name in names:
        scores[name] = min(2, total)
        total -= scores[name]
    return scores


def _draft(script: dict[str, list[Any]], number: int, *, jplus: int, jminus: int, tag: str) -> dict[str, Any]:
    """A schema-valid iteration answer with the given self-scores and a headline that names the draft."""
    load_bearing = script["synthesizer"][0]["memo"]["load_bearing"]
    answer = iteration_answer(number, load_bearing)
    return answer | {
        "memo": answer["memo"]
        | {"headline_thesis": f"Iteration {number}, {tag}: the installed base funds the cycle."},
        "self_jplus": _spread(JPLUS_DIMENSIONS, jplus),
        "self_jminus": _spread(JMINUS_DIMENSIONS, jminus),
    }


def _iteration(run: Run, number: int) -> IterationOutput:
    return IterationOutput.model_validate(AgentStep.objects.get(run=run, key=f"iteration-{number}").output)


def _user_messages(requests: list[dict[str, Any]]) -> list[str]:
    """The user message of each synthesizer request the fake server received, oldest first."""
    return [
        next(m["content"] for m in entry["body"]["messages"] if m["role"] == "user")
        for entry in requests
        if entry["prompt_name"] == "synthesizer"
    ]


def test_an_iteration_that_fails_the_rule_is_rewritten_once_with_the_first_aperture_and_then_passes(
    run: Run,
) -> None:
    script = script_for(run)
    script["synthesizer"] = [
        _draft(script, 1, jplus=4, jminus=5, tag="baseline"),
        _draft(script, 2, jplus=4, jminus=5, tag="relabelled"),  # no movement at all: fails both thresholds
        _draft(script, 2, jplus=6, jminus=4, tag="rewritten"),  # +2 and -1: exactly clears both
        _draft(script, 3, jplus=8, jminus=3, tag="final"),
    ]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        asked = _user_messages(server.requests)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message

    first, second, third = (_iteration(run, n) for n in (1, 2, 3))
    assert (first.rewritten, len(first.attempts), first.hill_climb.reason) == (
        False,
        1,
        "first iteration: baseline",
    )
    assert (second.rewritten, len(second.attempts)) == (True, 2)
    failed, kept = second.attempts
    reason = "J+ moved +0, needs at least +1.5; J- moved +0, needs at most -1"
    assert (failed.hill_climb.passed, failed.hill_climb.reason) == (False, reason)
    assert failed.aperture == FIRST_APERTURE
    rewrite_aperture = (
        f"REWRITE: the previous draft of this iteration failed the hill-climb rule ({reason}). "
        f"Change the aperture: {hillclimb.aperture(0)}."
    )
    assert kept.aperture == rewrite_aperture
    assert (kept.hill_climb.passed, kept.hill_climb.delta_jplus, kept.hill_climb.delta_jminus) == (
        True,
        2,
        -1,
    )
    assert second.final == kept.iteration and second.hill_climb == kept.hill_climb
    assert second.final.memo.headline_thesis == "Iteration 2, rewritten: the installed base funds the cycle."
    assert (third.rewritten, third.hill_climb.passed) == (False, True)

    # One request per draft: three iterations and one rewrite.
    assert len(asked) == 4
    assert LLMCall.objects.filter(run=run, prompt_name="synthesizer", outcome="ok").count() == 4
    draft, rewrite = asked[1], asked[2]
    assert "This is iteration 2 of 3." in draft and FIRST_APERTURE in draft and "REWRITE" not in draft
    assert "This is iteration 2 of 3." in rewrite and rewrite_aperture in rewrite
    assert "the bear case: argue from the disconfirming evidence first" in rewrite  # aperture(0), spelled out
    # The rewrite still answers iteration 1; the failed draft is not what it builds on.
    assert "Iteration 1, baseline" in rewrite and "relabelled" not in rewrite
    # Iteration 3 builds on the draft that was kept.
    assert "Iteration 2, rewritten" in asked[3] and "relabelled" not in asked[3]


def test_an_iteration_that_never_passes_keeps_its_last_draft_and_the_next_climbs_from_it(run: Run) -> None:
    script = script_for(run)
    script["synthesizer"] = [
        _draft(script, 1, jplus=4, jminus=5, tag="baseline"),
        # J+ +1 is short of +1.5, twice; J- -1 clears its threshold both times.
        _draft(script, 2, jplus=5, jminus=4, tag="first draft"),
        _draft(script, 2, jplus=5, jminus=4, tag="second draft"),
        _draft(script, 3, jplus=7, jminus=3, tag="final"),
    ]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        asked = _user_messages(server.requests)
    run.refresh_from_db()
    # The rule bounds the rewrites; it does not stop the run: the evaluator's verdict decides its status.
    assert run.status == Run.Status.DONE, run.status_message

    second = _iteration(run, 2)
    # One draft and MAX_REWRITES (one) rewrite, both failing: the last one is kept, marked as failed.
    assert hillclimb.MAX_REWRITES == 1
    assert (second.rewritten, len(second.attempts)) == (True, 2)
    reason = "J+ moved +1, needs at least +1.5"
    assert [(a.hill_climb.passed, a.hill_climb.reason) for a in second.attempts] == [(False, reason)] * 2
    assert second.final == second.attempts[1].iteration
    assert (
        second.final.memo.headline_thesis == "Iteration 2, second draft: the installed base funds the cycle."
    )
    assert (second.hill_climb.passed, second.hill_climb.reason) == (False, reason)
    assert second.attempts[1].aperture == (
        f"REWRITE: the previous draft of this iteration failed the hill-climb rule ({reason}). "
        f"Change the aperture: {hillclimb.aperture(0)}."
    )

    third = _iteration(run, 3)
    # Measured from the kept draft (J+ 5, J- 4), not from iteration 1 (J+ 4, J- 5): +2 and -1.
    assert (third.hill_climb.delta_jplus, third.hill_climb.delta_jminus) == (2, -1)
    assert (third.hill_climb.passed, third.rewritten) == (True, False)

    # Three iterations, one of them asked twice, and no third draft of iteration 2.
    assert len(asked) == 4
    assert [text.count("REWRITE:") for text in asked] == [0, 0, 1, 0]
    assert "Iteration 2, second draft" in asked[3]
