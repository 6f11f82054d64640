"""The crash soak: kill -9 the worker and its work-horse in the middle of one stage, N times over, and count
what a user would care about: runs that still finished, calls the endpoint was asked twice, artefacts
written twice. ``scripts/soak.sh STAGE [N]`` runs it (N = 20 by default); it reports, it never times."""

from __future__ import annotations

import os
import time

import pytest

from memos.models import Run
from tests.bench.conftest import BenchReport
from tests.memos.crash_harness import STAGES, crash_and_resume, load_desk_data

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]

STAGE = os.environ.get("SOAK_STAGE", "specialists")
RUNS = int(os.environ.get("SOAK_RUNS", "20"))


def test_soak_kills_the_worker_again_and_again_in_one_stage(bench_report: BenchReport) -> None:
    assert STAGE in STAGES, f"SOAK_STAGE must be one of {STAGES}"
    load_desk_data("AAPL")
    completed = repeated = paid_twice = duplicated = 0
    seconds: list[float] = []
    for number in range(1, RUNS + 1):
        started = time.monotonic()
        try:
            _, report = crash_and_resume(STAGE, label=f"soak-{number}")
        except AssertionError as stuck:  # a wait timed out: count it, say why, and go on soaking
            print(f"[soak] run {number}/{RUNS}: did not finish: {stuck}")
            continue
        seconds.append(time.monotonic() - started)
        completed += report.status == Run.Status.DONE
        repeated += report.repeated
        paid_twice += report.paid_twice
        duplicated += report.duplicated_steps
        print(f"[soak] run {number}/{RUNS}: {report.status}, {report.repeated} repeated, {report.claims}")
    bench_report.add(
        f"crash soak ({STAGE})",
        kills=RUNS,
        runs_completed=completed,
        calls_repeated=repeated,
        completed_calls_paid_twice=paid_twice,
        artefacts_duplicated=duplicated,
        median_s_per_run=round(sorted(seconds)[len(seconds) // 2], 1) if seconds else None,
    )
    assert completed == RUNS and paid_twice == 0 and duplicated == 0
