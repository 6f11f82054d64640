"""Code's checks on a real memo run (the real openai client against the fake server): catalyst dates inside
the window (one correction, then dropped and recorded), every gap of the previous iteration answered (one
correction), the evaluator's quotes found word for word, and a memo page that reads in whole sentences."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from agents.memo.outputs import EvaluationOutput, IterationOutput, MemoOutput
from agents.memo.roster import load_profiles
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Should the committee add to the position over the next 12 months?"


def _run(question: str = QUESTION) -> Run:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=question)
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def _output(run: Run, key: str) -> dict[str, Any]:
    output = AgentStep.objects.get(run=run, key=key).output
    assert isinstance(output, dict)
    return output


def _synthesizer_messages(requests: list[dict[str, Any]]) -> list[str]:
    return [
        next(m["content"] for m in entry["body"]["messages"] if m["role"] == "user")
        for entry in requests
        if entry["prompt_name"] == "synthesizer"
    ]


def _page(run: Run, key: str) -> str:
    client = Client()
    client.force_login(run.created_by)
    step = AgentStep.objects.get(run=run, key=key)
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/", headers={"X-Desk-Fragment": "1"}).content.decode()
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _dated(answer: dict[str, Any], date: str) -> dict[str, Any]:
    memo = answer["memo"] | {
        "catalysts": [{"event": "Product launch", "date": date, "expected_sign": "positive"}]
    }
    return answer | {"memo": memo}


def test_a_catalyst_dated_before_the_data_is_corrected_once_then_dropped_and_recorded() -> None:
    run = _run()
    script = script_for(run)
    stale = _dated(script["synthesizer"][0], "2023-09-01")
    script["synthesizer"] = [stale, stale]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        asked = _synthesizer_messages(server.requests)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert len(asked) == 2
    # The data is as of the newest filing in the evidence: its date is in every synthesizer prompt.
    assert "The data is as of 2026-01-30" in asked[0] and "before 2027-01-30" in asked[0]
    assert "CORRECTION" not in asked[0]
    assert "CORRECTION" in asked[1]
    assert "the catalyst dated 2023-09-01, on or before the data's as-of date 2026-01-30" in asked[1]

    iteration = IterationOutput.model_validate(_output(run, "iteration-1"))
    assert [a.correction != "" for a in iteration.attempts] == [False, True]
    assert iteration.attempts[0].problems == iteration.attempts[1].problems != []
    assert [d.catalyst.date for d in iteration.dropped_catalysts] == ["2023-09-01"]
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert memo.catalysts == [] and [d.catalyst.date for d in memo.dropped_catalysts] == ["2023-09-01"]
    assert memo.window is not None and memo.window.as_of.isoformat() == "2026-01-30"
    page = _page(run, "memo")
    assert "None kept" in page and "dropped by code" in page
    assert "on or before the data's as-of date 2026-01-30" in page


def test_a_corrected_catalyst_date_is_kept() -> None:
    run = _run()
    script = script_for(run)
    good = script["synthesizer"][0]
    script["synthesizer"] = [_dated(good, "2028-06-30"), good]  # past the horizon, then inside it
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert [c.date for c in memo.shown_catalysts] == [good["memo"]["catalysts"][0]["date"]]
    assert memo.dropped_catalysts == []


def test_an_iteration_that_skips_a_gap_of_the_one_before_is_corrected_once(settings: Settings) -> None:
    settings.MEMO_PROFILES = load_profiles({"MEMO_QUICK_ITERATIONS": "2"})
    run = _run()
    script = script_for(run)
    first, second = script["synthesizer"][:2]
    silent = second | {"answered_gaps": second["answered_gaps"][:1]}  # answers gap 1 only
    script["synthesizer"] = [first, silent, second]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        asked = _synthesizer_messages(server.requests)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert len(asked) == 3 and "gap 2 of the previous list has no entry in answered_gaps" in asked[2]
    iteration = IterationOutput.model_validate(_output(run, "iteration-2"))
    assert [(gap.gap, gap.outcome) for gap in iteration.gaps] == [
        (1, "addressed"),
        (2, "addressed"),
        (3, "out_of_scope"),
    ]
    assert len(iteration.attempts[0].problems) == 2 and iteration.attempts[1].problems == []
    page = _page(run, "iteration-2")
    assert "The previous iteration's gaps, answered" in page
    assert "declared out of scope" in page and "asked again with code's correction" in page


def test_a_quote_the_memo_does_not_contain_is_marked_and_its_score_does_not_count() -> None:
    run = _run()
    script = script_for(run)
    divergence = script["evaluator"][0]["divergences"][0] | {"quote": "revenue triples in every market"}
    script["evaluator"] = [script["evaluator"][0] | {"divergences": [divergence]}]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    evaluation = EvaluationOutput.model_validate(_output(run, "evaluation"))
    assert [q.found for q in evaluation.quotes] == [False]
    assert evaluation.verdict.uncounted == ["iteration 1 · non_consensus"]
    page = _page(run, "evaluation")
    assert "quote not found: its score does not count" in page
    assert "Scores that did not count: iteration 1 · non_consensus" in page


def test_the_memo_keeps_the_analysts_numbers_and_withholds_a_sentence_with_a_typed_figure() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    thesis = "Add over the next 12 months. Margins expand 35bps a year on services."
    script["synthesizer"] = [answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert [(w.section, w.sentences, w.kinds) for w in memo.withheld] == [
        ("Headline thesis", 1, ["a percentage"])
    ]
    page = _page(run, "memo")
    assert "Add over the next 12 months." in page  # the analyst's own "12 months"
    assert "35bps" not in page and "figure removed" not in page
    assert "(A sentence is withheld here: it stated a percentage the model typed" in page
    assert "What code withheld, and why" in page and "Headline thesis : 1 sentence" in page


def test_a_memo_sentence_that_slipped_into_another_script_is_withheld_with_codes_note() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    thesis = "Add over the next 12 months. Services 市场 share keeps rising."
    script["synthesizer"] = [answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert [(w.section, w.sentences, w.kinds) for w in memo.withheld] == [
        ("Headline thesis", 1, ["words in another script than the brief's"])
    ]
    note = "(A sentence is withheld here: it slipped into another script than the brief's (Han '市场').)"
    page = _page(run, "memo")
    assert "Add over the next 12 months." in page and note in page
    assert "share keeps rising" not in page
    version = run.latest_version
    assert version is not None
    assert version.sections["Headline thesis"] == f"Add over the next 12 months. [{note}]"
