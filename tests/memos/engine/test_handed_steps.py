"""A stage that one worker goes straight on with starts from the finished steps the stage before handed on
(memos.pipeline.earlier), exactly as the database holds them, and reads only what it was not handed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from agents.memo.outputs import EvidenceOutput
from memos.models import AgentStep, Run
from memos.pipeline import claims, driver, registry
from memos.pipeline.claims import Hold
from memos.pipeline.context import StageContext
from tests.memos.pipeline_support import fake_llm, quick_memo_run, script_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run() -> Iterator[Run]:
    yield from quick_memo_run()


def context(run: Run, hold: Hold) -> StageContext:
    fresh = Run.objects.select_related("brief__company").get(pk=run.pk)
    return StageContext(run=fresh, workflow=registry.workflow_for(fresh.workflow), hold=hold)


def data_stage_ran(run: Run) -> tuple[Hold, StageContext]:
    """The run's data stage claimed and its body run, the stage not yet ended."""
    held = claims.claim_stage(str(run.pk), "data", first=True)
    assert isinstance(held, Hold), held
    data = context(run, held)
    registry.workflow_for("memo").stage("data").body(data)
    data.settle()
    return held, data


def test_the_next_stage_reads_what_it_was_handed_as_stored_and_not_the_database_again(run: Run) -> None:
    held, data = data_stage_ran(run)
    handed = data.handed_on()
    assert handed is not None
    stored = AgentStep.objects.get(run=run, stage="data", key="evidence")
    assert handed.steps[("data", "evidence")].output == stored.output  # the form the database keeps

    following = claims.hand_over(held, "specialists", data.run)
    following.earlier = handed
    # A finished step is never written again while a worker holds the run; were it written, a stage that
    # read it would see the change, and one handed it would not have read it.
    AgentStep.objects.filter(pk=stored.pk).update(output={"not": "the evidence"})

    handed_to = context(run, following)
    evidence = handed_to.output("data", "evidence", EvidenceOutput)
    assert evidence == EvidenceOutput.model_validate(stored.output)

    read_again = context(run, replace(following, earlier=None))
    with pytest.raises(Exception, match="validation error"):
        read_again.output("data", "evidence", EvidenceOutput)


def test_every_stage_after_the_first_starts_from_the_steps_a_fresh_read_would_give(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, bool, bool]] = []
    read_steps = StageContext._read_steps

    def checked(ctx: StageContext) -> None:
        read_steps(ctx)
        fresh = StageContext(run=ctx.run, workflow=ctx.workflow, hold=replace(ctx.hold, earlier=None))
        read_steps(fresh)
        same = _listed(ctx._earlier) == _listed(fresh._earlier)  # outputs, kinds and plan order
        seen.append((ctx.hold.stage, ctx.hold.earlier is not None, same))

    monkeypatch.setattr(StageContext, "_read_steps", checked)
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))

    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    stages = [stage for stage, _, _ in seen]
    assert stages == ["data", "specialists", "synthesis", "evaluation", "memo"]
    assert [handed for _, handed, _ in seen] == [False, True, True, True, True]
    assert all(same for _, _, same in seen), seen


def _listed(earlier: Any) -> list[Any]:
    return list(earlier.items())


def test_a_step_this_stage_finished_is_read_as_it_wrote_it_and_not_once_it_failed(run: Run) -> None:
    _, data = data_stage_ran(run)
    stored = AgentStep.objects.get(run=run, stage="data", key="evidence")
    # Nobody else writes a held run's steps: were the row changed, the stage would still read what it wrote.
    AgentStep.objects.filter(pk=stored.pk).update(output={"not": "the evidence"})
    assert data.output("data", "evidence", EvidenceOutput) == EvidenceOutput.model_validate(stored.output)

    data.fail_step(data.step("evidence"), "failed on purpose")
    assert data.output("data", "evidence", EvidenceOutput) is None
