"""A screen whose managing director, or whose view across sectors, never answers in its schema: the work of
every other role is kept. The run needs review and says what did not finish; the version is frozen partial
and unevaluated (no review stands behind it), with every symbol flagged by the protocol alone and its price
charts drawn; a retry asks only what failed. Before, such a screen failed whole and froze nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from agents.screen.outputs import ScreenResult
from memos.models import AgentStep, ArtefactVersion, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.screen.plan import CHARTS, DIRECTOR, FLAGS, OVERALL, REVISE_KEYS
from memos.pipeline.watchdog import resume_stale_runs
from memos.services.runs import retry_run
from tests.memos.pipeline_support import analyst, fake_llm
from tests.memos.screen.test_partial_screen import _screen

pytestmark = pytest.mark.django_db(transaction=True)


class Broken:
    """A scripted answer that fits no schema while ``on``, the canned answer once switched off."""

    def __init__(self) -> None:
        self.on = True

    def __call__(self, schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
        return {"broken": True} if self.on else None


def _step(run: Run, key: str) -> AgentStep:
    return AgentStep.objects.get(run=run, key=key)


def test_a_review_never_fitting_leaves_a_partial_unevaluated_screen_and_a_retry_asks_it_alone() -> None:
    owner = analyst("ana")
    title = "Managing director: review"
    broken = Broken()
    with fake_llm({"screen_director": [broken] * 12}) as server:
        run = _screen(owner)
        driver.run_inline(str(run.pk))
        run.refresh_from_db()

        assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
        assert f"not finished: {title}" in run.status_message
        assert _step(run, DIRECTOR).status == AgentStep.Status.FAILED
        assert "schema" in _step(run, DIRECTOR).error
        for key in REVISE_KEYS:
            revise = _step(run, key)
            assert revise.status == AgentStep.Status.SKIPPED
            assert revise.summary == "not run: the managing director's review did not finish"

        # Every symbol flagged by the protocol, no change said to come from a review that did not happen.
        result = ScreenResult.model_validate(_step(run, FLAGS).output)
        assert len(result.assessments) == 6
        assert all(a.adjustment is None for a in result.assessments)
        assert _step(run, CHARTS).status == AgentStep.Status.DONE

        version = ArtefactVersion.objects.get(run=run)
        assert version.partial and not version.evaluated and version.score is None
        assert [p["step"] for p in version.unfinished] == [title]
        assert version.rendered_text.startswith("## Not finished\n")
        client = Client()
        client.force_login(owner)
        page = client.get(f"/versions/{version.pk}/").content.decode()
        assert 'id="partial"' in page and title in page and "managing director's quality" not in page

        # The retry pays for the review alone: every other call is read from the ledger.
        paid_before = server.request_count
        broken.on = False
        retry = retry_run(run=run, user=owner, enqueue=False)
        driver.run_inline(str(retry.pk))
        retry.refresh_from_db()
        assert retry.status == Run.Status.DONE, retry.status_message
        asked = LLMCall.objects.filter(run=retry).exclude(outcome=LLMCall.Outcome.CACHED)
        assert list(asked.values_list("prompt_name", flat=True)) == ["screen_director"]
        assert server.request_count - paid_before == 1
        whole = ArtefactVersion.objects.get(run=retry)
        assert not whole.partial and whole.evaluated


def test_a_view_across_sectors_that_never_fits_is_left_out_and_the_director_still_reviews() -> None:
    owner = analyst("ana")
    with fake_llm({"screen_senior_overall": [Broken()] * 12}):
        run = _screen(owner)
        driver.run_inline(str(run.pk))
        run.refresh_from_db()

    assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
    assert "not finished: Senior analyst: across sectors" in run.status_message
    assert _step(run, OVERALL).status == AgentStep.Status.FAILED
    assert _step(run, DIRECTOR).status == AgentStep.Status.DONE
    assert LLMCall.objects.filter(run=run, prompt_name="screen_director", outcome=LLMCall.Outcome.OK).exists()
    version = ArtefactVersion.objects.get(run=run)
    assert version.partial and version.evaluated


def test_a_review_whose_endpoint_stays_down_is_resumed_then_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transient failure resumes the stage, as for any call; past the run's attempts the screen goes on
    without the review instead of failing whole."""
    queued: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: queued.append((run_id, stage)))
    owner = analyst("ana")
    with fake_llm() as server:
        for _ in range(40):
            server.inject("503", prompt="screen_director")
        run = _screen(owner)
        driver.run_inline(str(run.pk))
        run.refresh_from_db()
        assert run.status == Run.Status.RUNNING and "will be resumed (attempt 1 of 3)" in run.status_message
        passes = 0
        while run.status == Run.Status.RUNNING and passes < 10:
            passes += 1
            assert resume_stale_runs(stale_after_s=60) == [str(run.pk)]
            driver.execute_stage(*queued.pop())
            run.refresh_from_db()

    assert passes == settings.RUN_MAX_STAGE_ATTEMPTS - 1
    assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
    director = _step(run, DIRECTOR)
    assert director.status == AgentStep.Status.FAILED and "503" in director.error
    version = ArtefactVersion.objects.get(run=run)
    assert version.partial and not version.evaluated
