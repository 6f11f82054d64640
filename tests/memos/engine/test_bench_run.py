"""``bench_run`` end to end on a quick profile: it measures whole runs against the fake server in its own
process and reports them (a benchmark's numbers are printed, never asserted)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memos.models import ArtefactVersion, Run
from tests.memos.pipeline_support import load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)


def test_bench_run_reports_each_run_and_keeps_what_the_runs_froze() -> None:
    load_desk_data("AAPL")
    out = StringIO()
    call_command("bench_run", "--latency-ms", "0", "--profile", "quick", "--runs", "2", "--json", stdout=out)
    report = json.loads(out.getvalue())
    runs = report["parallel"]["each"]
    assert report["fake_server"] == "own process" and len(runs) == 2
    assert all(
        run["status"] in (Run.Status.DONE, Run.Status.NEEDS_REVIEW) and run["llm_calls"] for run in runs
    )
    assert ArtefactVersion.objects.count() == 2  # frozen like any completed run, and kept


def test_bench_run_measures_an_agency_run_against_its_bounds() -> None:
    load_desk_data("AAPL")
    out = StringIO()
    call_command(
        "bench_run", "--workflow", "agency", "--latency-ms", "5", "--profile", "quick", "--json", stdout=out
    )
    report = json.loads(out.getvalue())
    assert report["status"] == Run.Status.DONE
    assert set(report) >= {"wall_s", "critical_path_s", "sequential_s", "calls", "prompt_tokens"}
    # The quick profile, 2 rounds: per move 1 + 1 + 2 + 1 calls on the path, plus F1/F2 and the personas,
    # then the jury's two threads (its three moves side by side).
    assert report["moves_debated"] == 3  # the quick profile: one persona's three moves
    assert report["critical_path_s"] == round((2 + 5 + 2) * 0.005, 3)
    assert report["sequential_s"] == round((2 + report["moves_debated"] * 5 + 3 * 2) * 0.005, 3)
    # F1, F2, one persona, the debates, and two jury calls for each of the three recommended moves.
    assert report["calls"] == 2 + 1 + report["moves_debated"] * (1 + 3 + 6 + 6) + 3 * 2


def test_bench_run_reruns_an_agency_brief_in_shuffled_orders_and_compares_the_top_three() -> None:
    load_desk_data("AAPL")
    out = StringIO()
    call_command(
        "bench_run",
        "--workflow",
        "agency",
        "--latency-ms",
        "0",
        "--profile",
        "quick",
        "--reruns",
        "3",
        "--json",
        stdout=out,
    )
    report = json.loads(out.getvalue())
    runs = report["reruns"]
    assert [run["order"] for run in runs] == [1, 2, 3] and all(run["status"] == "done" for run in runs)
    # Each rerun asks every debate afresh (its moves are numbered in another order) and nothing before it:
    # the data, the findings and the persona's moves come back from the ledger.
    # (The jury's calls read each move by its number too: two for each of the three recommended.)
    assert runs[0]["calls"] == 3 + 3 * 16 + 6 and runs[1]["calls"] == runs[2]["calls"] == 3 * 16 + 6
    # The overlap is the moves two reruns' top three share, by merge key (their numbers differ by order).
    tops = [set(run["top3"]) for run in runs]
    assert report["top3_overlap_min"] == min(len(a & b) for i, a in enumerate(tops) for b in tops[i + 1 :])
