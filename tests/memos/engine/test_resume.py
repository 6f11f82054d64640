"""Nothing is lost: the production worker and its work-horse killed (SIGKILL) in the middle of each stage.

The watchdog command sees the heartbeat go stale and queues the run again; a new worker finishes it. No
answer recorded before the kill is asked for again (counted at the fake server, per request), no step is
written twice, the dead worker's claim ends abandoned, and the memo is the one an uninterrupted run with the
same answers writes.
"""

from __future__ import annotations

import pytest

from memos.models import AgentStep, Run
from tests.memos.crash_harness import STAGES, crash_and_resume, load_desk_data, reference_memo

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("stage", STAGES)
def test_a_worker_killed_mid_stage_loses_nothing_and_pays_for_nothing_twice(stage: str) -> None:
    load_desk_data("AAPL")
    run, report = crash_and_resume(stage)

    assert report.status == Run.Status.DONE, report.message
    assert report.paid_twice == 0 and report.duplicated_steps == 0
    # Only calls still unanswered at the kill were sent again: at most the two in flight.
    assert report.repeated <= (2 if stage == "specialists" else 1)
    if stage == "specialists":
        assert report.ok_before_kill, "the kill should land after the first specialist answered"
    killed = [outcome for claimed, outcome in report.claims if claimed == stage]
    assert killed == ["abandoned", "finished"], report.claims
    assert all(outcome == "finished" for claimed, outcome in report.claims if claimed != stage)
    assert set(AgentStep.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    memo = AgentStep.objects.get(run=run, kind="memo").output
    assert memo == reference_memo()
