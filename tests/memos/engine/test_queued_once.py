"""Jobs queued at most once (memos.services.queued): a job that does the same work whenever it runs is not
stacked behind a copy of itself that still waits (issue 31 L4, L9), and work that changed while one runs
gets one more after it where the job read its inputs at its start."""

from __future__ import annotations

from collections.abc import Iterator

import django_rq
import pytest
from rq.job import JobStatus
from rq.queue import Queue

from memos.pipeline.deck.desk import gold_scores
from memos.services.queued import enqueue_once

pytestmark = pytest.mark.django_db(transaction=True)


def work(label: str) -> str:
    return label


@pytest.fixture
def queue() -> Iterator[Queue]:
    found = django_rq.get_queue("default")
    found.empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    yield found
    found.empty()  # type: ignore[no-untyped-call]


def test_a_job_still_waiting_is_not_queued_again(queue: Queue) -> None:
    assert enqueue_once(queue, "refresh-x", work, "x", description="x")
    assert not enqueue_once(queue, "refresh-x", work, "x", description="x")
    assert queue.count == 1
    queue.jobs[0].set_status(JobStatus.STARTED)
    assert not enqueue_once(queue, "refresh-x", work, "x", description="x")  # running: it does the work
    queue.jobs[0].set_status(JobStatus.FINISHED)
    assert enqueue_once(queue, "refresh-x", work, "x", description="x")  # done: the next is new work


def test_what_changed_while_one_runs_gets_one_more_after_it_never_two(
    queue: Queue,
) -> None:
    assert enqueue_once(queue, "calibrate", work, "c", description="c", again_after_running=True)
    queue.jobs[0].set_status(JobStatus.STARTED)
    assert enqueue_once(queue, "calibrate", work, "c", description="c", again_after_running=True)
    assert not enqueue_once(queue, "calibrate", work, "c", description="c", again_after_running=True)
    assert sorted(job.id for job in queue.jobs) == ["calibrate", "calibrate-again"]


def test_committee_scores_given_one_after_another_queue_one_calibration(
    queue: Queue,
) -> None:
    for _ in range(5):  # five members score in turn before a worker is free
        gold_scores.queue_calibration("deck_r2")
    assert [job.id for job in queue.jobs] == ["calibrate-judge-deck_r2"]
