"""Code's checks on a real memo run (the real openai client against the fake server): catalyst dates inside
the window (one correction, then dropped and recorded), every gap of the previous iteration answered (one
correction), the evaluator's quotes found word for word, and a memo page that reads in whole sentences."""

from __future__ import annotations

import html
import re
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from agents.memo.outputs import EvaluationOutput, IterationOutput, MemoOutput
from agents.memo.roster import load_profiles
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.pipeline.memo.settings import MemoSettings
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, evidence_of, fake_llm, load_desk_data, script_for

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
    profiles = load_profiles({"MEMO_QUICK_ITERATIONS": "2"})
    settings.WORKFLOW_SETTINGS = {**settings.WORKFLOW_SETTINGS, "memos.pipeline.memo": MemoSettings(profiles)}
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


NO_REWRITE: dict[str, list[object]] = {"rewrites": []}  # the writer, asked again, leaves the sentence out


def test_the_memo_keeps_the_analysts_numbers_and_withholds_a_sentence_with_a_typed_figure() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    thesis = "Add over the next 12 months. Margins expand 35bps a year on services."
    script["synthesizer"] = [answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}]
    script["reask"] = [NO_REWRITE]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert [(w.section, w.sentences, w.kinds) for w in memo.withheld] == [
        ("Headline thesis", 1, ["a percentage"])
    ]
    thesis_repair = next(r for r in memo.repairs if r.section == "Headline thesis")
    assert (thesis_repair.typed, thesis_repair.asked, thesis_repair.withheld) == (1, True, 1)
    page = _page(run, "memo")
    assert "Add over the next 12 months." in page  # the analyst's own "12 months"
    assert "35bps" not in page and "figure removed" not in page
    # One line for the paragraph, at its end, instead of a note where the sentence stood.
    assert (
        "Add over the next 12 months. (Code withheld a sentence of this paragraph: it stated a percentage"
        in page
    )
    assert "What code withheld, and why" in page and "Headline thesis : 1 sentence" in page


def test_a_memo_sentence_that_slipped_into_another_script_is_withheld_with_codes_note() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    thesis = "Add over the next 12 months. Services 市场 share keeps rising."
    script["synthesizer"] = [answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}]
    script["reask"] = [NO_REWRITE]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert [(w.section, w.sentences, w.kinds) for w in memo.withheld] == [
        ("Headline thesis", 1, ["words in another script than the brief's"])
    ]
    note = (
        "(Code withheld a sentence of this paragraph: it slipped into another script than the brief's "
        "(Han '市场').)"
    )
    page = _page(run, "memo")
    assert "Add over the next 12 months." in page and note in page
    assert "share keeps rising" not in page
    version = run.latest_version
    assert version is not None
    assert version.sections["Headline thesis"] == f"Add over the next 12 months. [{note}]"


def test_a_typed_figure_a_fact_backs_is_written_as_that_fact_and_the_rest_is_asked_again() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    revenue = next(
        item
        for items in evidence_of(run).values()
        for item in items
        if item.metric == "revenue" and item.period.startswith("FY")
    )
    millions = f"{Decimal(revenue.value) / 1_000_000:,.0f}"
    year = revenue.period.removeprefix("FY")
    macro = (
        f"Revenue reached USD {millions} million in {year}. Services grew 14% a year. "
        "Services grew 14% a year."
    )
    script["synthesizer"] = [answer | {"analysis": answer["analysis"] | {"macro": macro}}]
    rewrite = "Services outgrew the hardware business."
    script["reask"] = [{"rewrites": [{"number": 1, "text": rewrite}]}]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        reasks = [entry for entry in server.requests if entry["prompt_name"] == "reask"]
    memo = MemoOutput.model_validate(_output(run, "memo"))
    # Code's resolution: the copied figure is now the fact's reference, rendered and cited by code.
    assert memo.analysis.macro.startswith(f"Revenue reached [[{revenue.evidence_id}]] in {year}. ")
    # The re-ask quoted the one sentence still at fault (once: the repeat is the same sentence), and its
    # rewrite replaced it; the repeat is collapsed for the reader.
    assert len(reasks) == 1
    quoted = next(m["content"] for m in reasks[0]["body"]["messages"] if m["role"] == "user")
    assert "1. Services grew 14% a year." in quoted and "2. " not in quoted
    assert f"- {revenue.evidence_id} [HIGH] USD {millions} M" in quoted
    macro_repair = next(r for r in memo.repairs if r.section == "Macro")
    assert (macro_repair.typed, macro_repair.resolved, macro_repair.reasked) == (2, 1, 1)
    assert macro_repair.withheld == 0 and macro_repair.repeated == 1
    assert not any(w.section == "Macro" for w in memo.withheld)
    page = _page(run, "memo")
    assert f"Revenue reached USD {millions}" in page and rewrite in page and "14%" not in page
    assert "code put the cited fact in place of a typed number in 1 sentence" in page


def test_a_failed_re_ask_changes_nothing_and_a_rerun_pays_for_no_call_it_made() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    thesis = "Add over the next 12 months. Margins expand 35bps a year on services."
    script["synthesizer"] = [answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}]
    with fake_llm(script) as server:
        server.inject("500", "500", "500", "500", prompt="reask")  # every retry of the re-ask fails
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}, run.status_message
    memo = MemoOutput.model_validate(_output(run, "memo"))
    repair = next(r for r in memo.repairs if r.section == "Headline thesis")
    assert (repair.asked, repair.reasked, repair.withheld) == (True, 0, 1)
    assert memo.memo.headline_thesis == thesis  # the sentence stays withheld, as the model wrote it


def test_a_withheld_falsifier_is_written_by_code_from_the_metric_the_model_bound_it_to() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    falsifiers = ["If growth drops below 5%, exit.", "Gross margin contracts."]
    bindings = [{"falsifier": 1, "metric": "revenue_growth_yoy", "condition": "turns_negative"}]
    memo_answer = answer["memo"] | {"falsifiers": falsifiers, "falsifier_bindings": bindings}
    script["synthesizer"] = [answer | {"memo": memo_answer}]
    script["reask"] = [NO_REWRITE]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    memo = MemoOutput.model_validate(_output(run, "memo"))
    assert memo.memo.falsifiers == [
        "If revenue growth over the year turns negative, the thesis is wrong.",
        "Gross margin contracts.",
    ]
    repair = next(r for r in memo.repairs if r.section == "Falsifiers")
    assert (repair.typed, repair.bound, repair.withheld) == (1, 1, 0)
    assert not any(w.section == "Falsifiers" for w in memo.withheld)
    assert "code wrote 1 falsifier from the metric the model bound it to" in _page(run, "memo")


def test_a_section_none_of_whose_items_can_be_shown_says_so_once() -> None:
    run = _run()
    script = script_for(run)
    answer = script["synthesizer"][0]
    falsifiers = ["If growth drops below 5%, exit.", "If margins lose 200bps, exit."]
    unbound = answer["memo"] | {"falsifiers": falsifiers, "falsifier_bindings": []}
    script["synthesizer"] = [answer | {"memo": unbound}]
    script["reask"] = [NO_REWRITE]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    version = run.latest_version
    assert version is not None
    assert version.sections["Falsifiers"] == (
        "[(Nothing of this section can be shown: it stated a percentage the model typed, which no cited fact "
        "backs.)]"
    )
