"""Two evaluators where a second is configured on another model: both grade the memo at once, code keeps the
more conservative verdict and lists where they disagree on the evaluation's page; a second evaluator that
fails leaves the first's verdict standing, said on the page; with none configured, one evaluator asks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.test import Client, override_settings

from agents.llm.config import Endpoint
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from agents.memo.outputs import EvaluationOutput
from memos.models import AgentStep, ArtefactVersion, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.memo.rehearsal import evaluation_answer
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_settings, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def two_evaluators(script: dict[str, list[Any]]) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(script=script, answers=fake_answers()) as server:
        settings = fake_settings(server)
        second = Endpoint(base_url=server.url, api_key="test-key", model="fake-second-evaluator")
        both = settings.model_copy(update={"roles": {**settings.roles, Role.SECOND_EVALUATOR: second}})
        with override_settings(LLM_SETTINGS=both):
            yield server


def harsh(iterations: int) -> dict[str, Any]:
    """The rehearsal's evaluation (J+ 6 of 10 on the final iteration) with every J+ dimension (0-2) three
    points lower, down to 0."""
    answer = evaluation_answer(iterations)
    for grade in answer["grades"]:
        grade["jplus"] = {key: max(0, value - 3) for key, value in grade["jplus"].items()}
    return answer


def evaluated(script_change: dict[str, list[Any]] | None = None) -> tuple[Run, EvaluationOutput]:
    load_desk_data("AAPL")
    owner = analyst()
    brief = create_brief(owner=owner, ticker="AAPL", question="Should the committee add before the launch?")
    run = start_run(brief=brief, user=owner, profile="quick", enqueue=False, workflow="memo")
    script = script_for(run)
    iterations = len(script["synthesizer"]) // 2
    script["evaluator@second_evaluator"] = [harsh(iterations)] * 2
    script.update(script_change or {})
    with two_evaluators(script) as server:
        driver.run_inline(str(run.pk))
        asked = {(r["role"], r["model"]) for r in server.requests if r["prompt_name"] == "evaluator"}
    assert asked == {("evaluator", "fake-evaluator"), ("second_evaluator", "fake-second-evaluator")}
    step = AgentStep.objects.get(run=run, key="evaluation")
    return run, EvaluationOutput.model_validate(step.output)


def test_the_more_conservative_verdict_is_kept_and_the_disagreement_is_shown() -> None:
    run, output = evaluated()
    assert output.kept_role == "second_evaluator"
    assert output.verdict.decision == "REVISE"
    assert output.other is not None and output.other.role == "evaluator"
    assert output.other.verdict.decision == "ACCEPT"
    assert output.other.verdict.calibrated_jplus > output.verdict.calibrated_jplus
    parts = {(d.what, d.kept, d.other) for d in output.disagreements}
    assert ("decision", "REVISE", "ACCEPT") in parts
    assert ("calibrated J+", "0", "6") in parts
    assert ("causal_mechanism", "0", "2") in parts  # a dimension one finds absent, the other fully there
    version = ArtefactVersion.objects.get(run=run)
    assert version.score == float(output.verdict.calibrated_jplus)  # the kept verdict's J+ is the memo's
    assert LLMCall.objects.filter(run=run, role="second_evaluator", outcome="ok").count() == 1

    client = Client()
    client.force_login(run.brief.owner)
    step = AgentStep.objects.get(run=run, key="evaluation")
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    section = page[page.index('id="two-evaluators"') :]
    assert "The second evaluator's verdict is kept" in section
    assert "fake-evaluator, said <strong>ACCEPT</strong>" in section


def test_a_second_evaluator_that_fails_leaves_the_first_verdict_standing() -> None:
    broken: dict[str, list[Any]] = {"evaluator@second_evaluator": ["not json at all"] * 6}
    run, output = evaluated(broken)
    assert output.kept_role == "evaluator" and output.other is None
    assert output.verdict.decision == "ACCEPT"
    assert output.other_error.startswith("The second evaluator gave no verdict:")
    client = Client()
    client.force_login(run.brief.owner)
    step = AgentStep.objects.get(run=run, key="evaluation")
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "The first evaluator's verdict stands alone." in page


def test_a_first_evaluator_that_fails_leaves_the_second_verdict_standing() -> None:
    broken: dict[str, list[Any]] = {"evaluator@evaluator": ["not json at all"] * 6}
    _run, output = evaluated(broken)
    assert output.kept_role == "second_evaluator" and output.other is None
    assert output.verdict.decision == "REVISE"  # the harsh second, on its own
    assert output.other_error.startswith("The first evaluator gave no verdict:")
