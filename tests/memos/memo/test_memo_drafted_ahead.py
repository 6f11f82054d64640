"""The memo stage's draft is made while the evaluator is asked (memos.pipeline.memo.memo.memo_draft, handed on
by ``StageContext.prepare_next``): the memo delivered is the one the memo stage would have made itself, with
the verdict attached; a draft that could not be made ahead is made by the memo stage."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agents.llm import gateway as llm_gateway
from agents.llm.types import Provider, ProviderRequest, ProviderResponse
from agents.memo.outputs import EvaluationOutput, MemoOutput
from memos.models import AgentStep, Run
from memos.pipeline import context, driver, registry
from memos.pipeline.claims import Hold
from memos.pipeline.context import StageContext
from memos.pipeline.liveness import RunLock
from memos.pipeline.memo import evaluation, memo
from tests.memos.pipeline_support import fake_llm, quick_memo_run, script_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run() -> Iterator[Run]:
    yield from quick_memo_run()


def drafts_by_stage(monkeypatch: pytest.MonkeyPatch, *, fail_ahead: bool = False) -> list[str]:
    """The stage that made each draft; ``fail_ahead``: the one tried during the evaluation raises."""
    made: list[str] = []

    def counted(ctx: StageContext) -> MemoOutput:
        made.append(ctx.hold.stage)
        if fail_ahead and ctx.hold.stage == "evaluation":
            raise RuntimeError("a draft that cannot be made ahead")
        return memo_draft(ctx)

    memo_draft = memo.memo_draft
    monkeypatch.setattr(evaluation, "memo_draft", counted)
    monkeypatch.setattr(memo, "memo_draft", counted)
    return made


def test_the_memo_is_drafted_during_the_evaluation_and_delivered_as_the_memo_stage_would_make_it(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = drafts_by_stage(monkeypatch)
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}, run.status_message
    assert made == ["evaluation"]  # the memo stage took the draft it was handed

    stored = MemoOutput.model_validate(AgentStep.objects.get(run=run, key="memo").output)
    verdict = EvaluationOutput.model_validate(AgentStep.objects.get(run=run, key="evaluation").output).verdict
    assert stored.verdict == verdict and stored.evaluated and not stored.not_evaluated
    # What the memo stage makes from the same steps when it was handed nothing.
    hold = Hold(str(run.pk), "memo", lease=0, attempt=1, claim_pk=0, lock=RunLock(str(run.pk), "reader"))
    fresh = StageContext(
        run=Run.objects.select_related("brief__company").get(pk=run.pk),
        workflow=registry.workflow_for("memo"),
        hold=hold,
    )
    assert memo.delivered_memo(fresh) == stored
    assert made == ["evaluation", "memo"]


def test_a_draft_that_could_not_be_made_ahead_is_made_by_the_memo_stage(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = drafts_by_stage(monkeypatch, fail_ahead=True)
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}, run.status_message
    assert made == ["evaluation", "memo"]
    stored = MemoOutput.model_validate(AgentStep.objects.get(run=run, key="memo").output)
    assert stored.evaluated


def test_the_draft_is_made_once_the_evaluators_request_is_on_its_way(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made any earlier, the draft (8-10 ms of this interpreter) held up the request it was made beside."""
    order: list[str] = []
    sending = llm_gateway._send

    def noted(provider: Provider, request: ProviderRequest, sent: threading.Event | None) -> ProviderResponse:
        order.append(f"send {request.role}")
        return sending(provider, request, sent)

    def drafted(ctx: StageContext) -> MemoOutput:
        order.append(f"draft in {ctx.hold.stage}")
        return memo.memo_draft(ctx)

    monkeypatch.setattr(llm_gateway, "_send", noted)
    monkeypatch.setattr(evaluation, "memo_draft", drafted)
    # The wait is bounded (0.1 s) so that a slow send never holds the draft long; on a loaded machine (a
    # clean-clone suite of 26 minutes) the evaluator's thread took longer than that to send. The order is
    # what this test is about: the bound is made long enough that only a draft made first could fail it.
    monkeypatch.setattr(context, "SENDING_WAIT_S", 10.0)
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    assert order.count("draft in evaluation") == 1
    assert order.index("send evaluator") < order.index("draft in evaluation")
