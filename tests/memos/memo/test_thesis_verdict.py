"""A memo whose thesis argues from figures it does not rest on is REVISE, whatever the evaluator grades it
(agents.memo.thesis): its run needs review and its version says why, through the real pipeline and the fake
server."""

from __future__ import annotations

import pytest

from agents.memo.outputs import EvaluationOutput
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

# Specialists run on a thread pool with their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)


def _run() -> Run:
    load_desk_data("AAPL")
    user = analyst("ana")
    brief = create_brief(owner=user, ticker="AAPL", question="Is the margin story durable?")
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def _finished(run: Run, thesis: str | None) -> tuple[Run, EvaluationOutput, list[str]]:
    script = script_for(run)
    load_bearing: list[str] = script["synthesizer"][0]["memo"]["load_bearing"]
    if thesis is not None:
        script["synthesizer"] = [
            answer | {"memo": answer["memo"] | {"headline_thesis": thesis}}
            for answer in script["synthesizer"]
        ]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    step = AgentStep.objects.get(run=run, key="evaluation")
    return run, EvaluationOutput.model_validate(step.output), load_bearing


def test_a_thesis_argued_from_a_metric_it_does_not_rest_on_is_revised_by_code() -> None:
    run, evaluated, load_bearing = _finished(
        _run(), "Gross margin widening signals pricing power the market discounts."
    )
    assert not any(":gross_margin" in i for i in load_bearing), load_bearing  # the premise of the test
    # The evaluator's scripted grades would accept it (a competent 6 and 3); code says why they do not count.
    assert evaluated.verdict.calibrated_jplus >= 5 and evaluated.verdict.decision == "REVISE"
    (fault,) = evaluated.verdict.code_faults
    assert fault.startswith("the headline thesis argues from gross margin, but the evidence it names as ")
    assert all(i in fault for i in load_bearing)
    assert run.status == Run.Status.NEEDS_REVIEW
    assert "code: the headline thesis argues from gross margin" in run.status_message
    version = ArtefactVersion.objects.get(run=run)
    assert version.content["verdict"]["decision"] == "REVISE"
    assert version.content["verdict"]["code_faults"] == [fault]
    # Where the committee reads the memo (its page and PDF print the sections), the verdict says why.
    assert "## Verdict\nREVISE: calibrated J+ " in version.rendered_text
    assert f"code: {fault}" in version.rendered_text


def test_the_same_memo_with_a_thesis_citing_what_it_rests_on_is_accepted() -> None:
    run, evaluated, _ = _finished(_run(), None)  # the rehearsal's thesis cites its first load-bearing figure
    assert evaluated.verdict.decision == "ACCEPT" and evaluated.verdict.code_faults == []
    assert run.status == Run.Status.DONE, run.status_message
    version = ArtefactVersion.objects.get(run=run)
    assert version.content["verdict"]["decision"] == "ACCEPT"
    assert "## Verdict\nACCEPT: calibrated J+ " in version.rendered_text
    assert "code:" not in version.rendered_text
