"""Sub-steps claimed by workers (memos.pipeline.substeps), on real PostgreSQL rows: a row is claimed by one
worker at a time, taken over once its holder's heartbeat is quiet, every write under a claim is refused once
the claim is no longer current, the heartbeat keeps a claim alive, and a released row is anyone's again.

The rows are a run's moves, claimed by a kind of sub-step declared here (``TASKS``), not by the agency's."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import django_rq
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.test import override_settings
from django.utils import timezone
from rq import Queue

from memos.models import DebateTurn, Move, Run
from memos.pipeline.errors import LeaseLost
from memos.pipeline.substeps import Heartbeats, SubStepHold, SubSteps
from tests.memos.crash_harness import wait_for
from tests.memos.factories import run_for
from tests.memos.pipeline_support import analyst

pytestmark = pytest.mark.django_db(transaction=True)  # the heartbeat and the racing claimers are threads

STAGE = "sandbox"
TASKS = SubSteps(
    model=Move,
    stage=STAGE,
    key="move_id",
    unfinished=Q(debated_at__isnull=True, failure=""),
    job="memos.pipeline.agency.sandbox.debate_move",
    what="task",
)


@pytest.fixture
def run() -> Run:
    run = run_for(analyst(), status=Run.Status.RUNNING)
    Run.objects.filter(pk=run.pk).update(stage=STAGE)
    run.refresh_from_db()
    return run


@pytest.fixture
def rows(run: Run) -> list[Move]:
    return [
        Move.objects.create(
            run=run,
            move_id=f"m{number}",
            number=number,
            persona="capital",
            risk=Move.Risk.LOW,
            title=f"move {number}",
            dedup_key=f"move-{number}",
        )
        for number in (1, 2, 3, 4)
    ]


def fresh(row: Move) -> Move:
    """The row as another worker reads it."""
    return Move.objects.get(pk=row.pk)


def go_quiet(row: Move) -> None:
    """The holder's heartbeat stopped longer ago than a row may stay silent (a kill -9)."""
    silent = timedelta(seconds=int(settings.RUN_STALE_AFTER_S) + 1)
    Move.objects.filter(pk=row.pk).update(heartbeat_at=timezone.now() - silent)


def claimed(row: Move, worker: str) -> SubStepHold[Move]:
    hold = TASKS.claim(fresh(row), worker=worker)
    assert hold is not None
    return hold


def retitle(hold: SubStepHold[Move], title: str) -> None:
    hold.write(lambda: Move.objects.filter(pk=hold.row.pk).update(title=title), what="retitling")


def turn(hold: SubStepHold[Move], text: str) -> DebateTurn:
    slot = {"move": hold.row, "thread": "all", "round": 1, "speaker": "critic"}
    fields = {
        "text": text,
        "citations": ["F1"],
        "prompt_name": "critic",
        "prompt_version": 1,
        "prompt_hash": "p",
    }
    return hold.insert_once(DebateTurn, slot, fields | {"request_hash": "r"}, what="a turn")


def test_a_row_inserted_under_a_claim_is_stored_once_per_slot_and_refused_after_a_takeover(
    rows: list[Move],
) -> None:
    stale = claimed(rows[0], "alpha:1")
    first = turn(stale, "the critic's first answer")
    assert first.pk is not None and first.created_at is not None
    stored = DebateTurn.objects.get(pk=first.pk)
    assert (stored.text, stored.citations, stored.move_id) == (
        "the critic's first answer",
        ["F1"],
        rows[0].pk,
    )
    # The same call answered twice around a takeover: the slot's row is read back, not doubled.
    again = turn(stale, "an answer to the same call, written again")
    assert (again.pk, again.text) == (first.pk, "the critic's first answer")

    go_quiet(rows[0])
    current = claimed(rows[0], "beta:2")
    with pytest.raises(LeaseLost):
        turn(stale, "written by alpha after the takeover")  # its slot's row exists: still refused
    assert stale.lost.is_set()
    DebateTurn.objects.filter(pk=first.pk).delete()
    with pytest.raises(LeaseLost):
        turn(stale, "written by alpha after the takeover")
    assert not DebateTurn.objects.exists()
    assert turn(current, "written by beta").text == "written by beta"


def test_a_row_is_not_inserted_under_a_current_claim_once_the_run_is_not_running(
    run: Run, rows: list[Move]
) -> None:
    hold = claimed(rows[0], "alpha:1")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    with pytest.raises(LeaseLost):
        turn(hold, "after the run failed")
    assert not DebateTurn.objects.exists()


def test_a_row_nobody_holds_is_claimed_with_the_next_lease_in_the_workers_name(rows: list[Move]) -> None:
    hold = TASKS.claim(fresh(rows[0]), worker="alpha:1")
    assert hold is not None
    assert (hold.lease, hold.worker) == (1, "alpha:1")
    row = fresh(rows[0])
    assert (row.worker, row.lease) == ("alpha:1", 1)
    assert row.heartbeat_at is not None


def test_a_second_claimer_is_refused_while_the_holder_is_alive(rows: list[Move]) -> None:
    claimed(rows[0], "alpha:1")
    assert TASKS.claim(fresh(rows[0]), worker="beta:2") is None
    row = fresh(rows[0])
    assert (row.worker, row.lease) == ("alpha:1", 1)
    assert rows[0].pk not in {row.pk for row in TASKS.claimable(str(row.run_id))}


def test_a_holder_whose_heartbeat_went_quiet_is_taken_over_with_a_higher_lease(rows: list[Move]) -> None:
    claimed(rows[0], "alpha:1")
    go_quiet(rows[0])
    assert rows[0].pk in {row.pk for row in TASKS.claimable(str(rows[0].run_id))}
    taken = claimed(rows[0], "beta:2")
    assert taken.lease == 2
    row = fresh(rows[0])
    assert (row.worker, row.lease) == ("beta:2", 2)


def test_a_stale_holders_write_is_refused_after_a_takeover_and_the_new_holders_lands(
    rows: list[Move],
) -> None:
    stale = claimed(rows[0], "alpha:1")
    retitle(stale, "written by alpha before the takeover")
    go_quiet(rows[0])
    current = claimed(rows[0], "beta:2")
    with pytest.raises(LeaseLost):
        retitle(stale, "written by alpha after the takeover")
    assert stale.lost.is_set()
    with pytest.raises(LeaseLost):
        stale.check()  # and no further call is made for it
    retitle(current, "written by beta")
    assert fresh(rows[0]).title == "written by beta"


def test_a_write_under_a_current_claim_is_refused_once_the_run_is_not_running(
    run: Run, rows: list[Move]
) -> None:
    hold = claimed(rows[0], "alpha:1")
    retitle(hold, "while the run runs")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    with pytest.raises(LeaseLost):
        retitle(hold, "after the run failed")
    assert fresh(rows[0]).title == "while the run runs"


def test_nothing_is_claimed_of_a_run_at_another_stage_or_not_running_nor_a_finished_row(
    run: Run, rows: list[Move]
) -> None:
    Move.objects.filter(pk=rows[3].pk).update(debated_at=timezone.now())
    assert TASKS.claim(fresh(rows[3]), worker="alpha:1") is None
    Run.objects.filter(pk=run.pk).update(stage="final")
    assert TASKS.claim(fresh(rows[0]), worker="alpha:1") is None
    Run.objects.filter(pk=run.pk).update(stage=STAGE, status=Run.Status.QUEUED)
    assert TASKS.claim(fresh(rows[0]), worker="alpha:1") is None
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    assert TASKS.claim(fresh(rows[0]), worker="alpha:1") is not None


def test_claimable_rows_are_those_still_to_do_that_nobody_holds_or_whose_holder_went_quiet_in_order(
    run: Run, rows: list[Move]
) -> None:
    held, quiet, free, done = rows
    claimed(held, "alpha:1")
    claimed(quiet, "alpha:1")
    go_quiet(quiet)
    Move.objects.filter(pk=done.pk).update(debated_at=timezone.now())
    assert [row.move_id for row in TASKS.claimable(str(run.pk))] == [quiet.move_id, free.move_id]


def test_a_released_row_is_anyones_at_once_and_a_stale_holders_release_frees_nothing(
    run: Run, rows: list[Move]
) -> None:
    first = claimed(rows[0], "alpha:1")
    first.release()
    assert fresh(rows[0]).worker == ""
    assert rows[0].pk in {row.pk for row in TASKS.claimable(str(run.pk))}
    second = claimed(rows[0], "beta:2")
    first.release()  # alpha's release arrives late: the row is beta's now
    row = fresh(rows[0])
    assert (row.worker, row.lease) == ("beta:2", second.lease)
    assert TASKS.claim(fresh(rows[0]), worker="gamma:3") is None


@override_settings(RUN_HEARTBEAT_S=0.05)
def test_the_heartbeat_keeps_a_hold_alive_and_a_row_it_does_not_beat_for_goes_quiet(
    rows: list[Move],
) -> None:
    beaten = claimed(rows[0], "alpha:1")
    claimed(rows[1], "alpha:1")  # held too, but its heartbeat is not stamped
    go_quiet(rows[0])
    go_quiet(rows[1])
    quiet_since = fresh(rows[0]).heartbeat_at
    assert quiet_since is not None
    with Heartbeats() as beats:
        beats.add(beaten)
        wait_for(lambda: (fresh(rows[0]).heartbeat_at or quiet_since) > quiet_since, 5, "a heartbeat")
        assert TASKS.claim(fresh(rows[0]), worker="beta:2") is None
        assert TASKS.claim(fresh(rows[1]), worker="beta:2") is not None
    assert not beaten.lost.is_set()
    assert fresh(rows[0]).worker == "alpha:1"


def test_the_heartbeat_marks_a_hold_lost_once_another_worker_took_its_row_over(rows: list[Move]) -> None:
    stale = claimed(rows[0], "alpha:1")
    go_quiet(rows[0])
    current = claimed(rows[0], "beta:2")
    with Heartbeats() as beats:
        beats.add(stale)
        beats.add(current)
        beats.beat_once()
    assert stale.lost.is_set()
    assert not current.lost.is_set()
    with pytest.raises(LeaseLost):
        stale.check()
    current.check()


def test_two_workers_racing_for_one_row_get_it_once(rows: list[Move]) -> None:
    """The second claimer queues behind the first one's uncommitted claim and gets nothing once it
    commits."""
    holds: dict[str, SubStepHold[Move] | None] = {}
    first_claimed, let_go = threading.Event(), threading.Event()

    def first() -> None:
        try:
            with transaction.atomic():
                holds["alpha"] = TASKS.claim(fresh(rows[0]), worker="alpha:1")
                first_claimed.set()
                let_go.wait(10)
        finally:
            connection.close()

    def second() -> None:
        try:
            holds["beta"] = TASKS.claim(fresh(rows[0]), worker="beta:2")
        finally:
            connection.close()

    alpha, beta = threading.Thread(target=first), threading.Thread(target=second)
    alpha.start()
    try:
        assert first_claimed.wait(10)
        beta.start()
        wait_for(waiting_on_a_lock, 10, "the second claimer to wait for the first one's lock")
    finally:
        let_go.set()
        for thread in (alpha, beta):
            if thread.ident is not None:  # started
                thread.join(10)
    first_hold = holds["alpha"]
    assert first_hold is not None and first_hold.lease == 1
    assert holds["beta"] is None
    row = fresh(rows[0])
    assert (row.worker, row.lease) == ("alpha:1", 1)


def waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        found = cursor.fetchone()
    return found is not None and found[0] > 0


def test_a_job_takes_its_row_by_key_and_nothing_once_the_row_is_done(run: Run, rows: list[Move]) -> None:
    hold = TASKS.take(str(run.pk), "m2", worker="alpha:1")
    assert hold is not None and hold.row.pk == rows[1].pk
    Move.objects.filter(pk=rows[2].pk).update(debated_at=timezone.now())
    assert TASKS.take(str(run.pk), "m3", worker="alpha:1") is None
    assert TASKS.take(str(run.pk), "m9", worker="alpha:1") is None


@pytest.fixture
def queue(redis_url: str) -> Iterator[Queue]:
    found = django_rq.get_queue("default")
    found.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    yield found
    found.empty()  # type: ignore[no-untyped-call]


def test_one_job_per_row_is_enqueued_with_the_run_and_the_rows_key(run: Run, queue: Queue) -> None:
    TASKS.enqueue(str(run.pk), ["m1", "m3"])
    jobs = queue.get_jobs()
    assert [(job.func_name, job.args) for job in jobs] == [
        (TASKS.job, (str(run.pk), "m1")),
        (TASKS.job, (str(run.pk), "m3")),
    ]
    assert jobs[0].description == f"run {str(run.pk)[:8]}: task m1"
