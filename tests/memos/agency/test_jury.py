"""The optional jury (seed 003's kill-argument) on the recommended moves: it lists atomic objections and rules
on each; code computes each verdict from the rulings and shows the jury's disagreement with the ranking, which
stays the board's."""

from __future__ import annotations

from typing import Any

import pytest

from agents.agency.outputs import JuryOutput, RankingOutput
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)


def _run() -> Run:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question="Which moves should the company make next?")
    with changed("memos.pipeline.agency", jury=True):
        return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="agency")


def _jury(run: Run) -> JuryOutput:
    return JuryOutput.model_validate(AgentStep.objects.get(run=run, key="jury").output)


def test_every_recommended_move_is_audited_and_the_verdict_is_code_s() -> None:
    run = _run()
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        audits = [entry for entry in server.requests if entry["prompt_name"] == "agency_jury"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert "every recommended move survives the jury" in run.status_message
    jury = _jury(run)
    ranking = RankingOutput.model_validate(AgentStep.objects.get(run=run, key="ranking").output)
    assert [v.move_id for v in jury.verdicts] == [row.move_id for row in ranking.ranked if row.recommended]
    assert len(audits) == 3
    assert all((v.standing, v.answered, v.survives) == (1, 2, True) for v in jury.verdicts)
    # The fake's jury shares the analysts' model: seed 003's warning says so.
    assert "same model family" in jury.same_model_warning
    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    assert "survives the jury" in version.sections["Jury"]


def test_a_move_the_jury_would_not_let_through_sends_the_run_to_review_and_an_unquoted_answer_stands() -> (
    None
):
    run = _run()
    # The first move audited: one objection "answered" without the debate's words, two that stand.
    quoteless: dict[str, Any] = {
        "objections": [
            {
                "objection": "It costs too much.",
                "ruling": "answered",
                "quote": "words nobody in the debate wrote",
            },
            {
                "objection": "The timing is wrong.",
                "ruling": "stands",
                "quote": "words nobody in the debate wrote",
            },
            {
                "objection": "Rivals will answer.",
                "ruling": "unsupported",
                "quote": "words nobody in the debate wrote",
            },
        ]
    }
    with fake_llm({"agency_jury": [quoteless]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW
    jury = _jury(run)
    failed = [v for v in jury.verdicts if not v.survives]
    assert len(failed) == 1 and (failed[0].standing, failed[0].answered) == (2, 0)
    assert "the jury disagrees" in run.status_message and failed[0].move_id in run.status_message
