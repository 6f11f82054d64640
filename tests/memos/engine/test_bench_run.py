"""``bench_run`` end to end on a quick profile: it measures whole runs against the fake server in its own
process and reports them (a benchmark's numbers are printed, never asserted)."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memos.models import ArtefactVersion, LLMCall, Run, VersionFile
from memos.services.benchmarks import chain
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
    # What the freeze makes on the path and the PDF printed after it, off the path, are timed apart, beside
    # the ratio; the CPU is per paid call.
    assert all(run["render_s"] > 0 and run["cpu_ms_per_call"] > 0 and run["calls"] for run in runs)
    assert all(run["print_s"] > 0 and run["files_ready_s"] >= run["wall_s"] for run in runs)
    assert report["parallel"]["print_s"]["median"] > 0


COMMON = {
    "wall_s",
    "critical_path_s",
    "ratio",
    "render_s",
    "print_s",
    "cpu_ms_per_call",
    "calls",
    "tokens_in",
}


@pytest.mark.parametrize(
    ("workflow", "arguments"),
    [("deck", ["--profile", "quick"]), ("screen", ["--symbols", "XOM,CVX,DUK,NEE,JPM,BAC"])],
)
def test_bench_run_measures_a_deck_and_a_screen_against_the_chain_their_ledger_shows(
    workflow: str, arguments: list[str]
) -> None:
    load_desk_data("AAPL")
    out = StringIO()
    call_command("bench_run", "--workflow", workflow, "--latency-ms", "5", *arguments, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["workflow"] == workflow and report["status"] in (Run.Status.DONE, Run.Status.NEEDS_REVIEW)
    assert set(report) >= COMMON
    # A chain of dependent calls, shorter than the calls paid for (some ran side by side), and a wall that
    # cannot be shorter than the latency it waited on.
    assert 1 <= report["critical_path_calls"] < report["calls"]
    assert report["critical_path_s"] == round(report["critical_path_calls"] * 0.005, 3)
    assert report["wall_s"] >= report["critical_path_s"] and report["ratio"] >= 1
    # Its frozen files: a deck's made on the run's path and its PDF printed after the freeze; a screen's all
    # made after the freeze (Files.after_freeze), none on the path. Stored either way.
    on_path = report["render_s"] > 0
    assert on_path if workflow == "deck" else not on_path
    assert report["print_s"] > 0 and report["files_ready_s"] >= report["wall_s"]
    version = ArtefactVersion.objects.get(kind=workflow)
    assert VersionFile.objects.filter(version=version, name="render.pdf").exists()


def test_the_chain_is_the_longest_run_of_calls_each_starting_after_the_one_before_ended() -> None:
    load_desk_data("AAPL")
    call_command("bench_run", "--latency-ms", "0", "--profile", "quick", "--json", stdout=StringIO())
    run = Run.objects.get()
    LLMCall.objects.filter(run=run).delete()
    t0 = timezone.now()

    def call(start_s: float, end_s: float, outcome: str = LLMCall.Outcome.OK) -> None:
        row = LLMCall.objects.create(
            run=run,
            role="r",
            prompt_name="p",
            prompt_hash="h",
            model="m",
            base_url="u",
            request_hash="x",
            duration_ms=int((end_s - start_s) * 1000),
            outcome=outcome,
        )
        LLMCall.objects.filter(pk=row.pk).update(created_at=t0 + timedelta(seconds=end_s))

    # Three side by side, then one after them, then two side by side: a chain of three.
    for _ in range(3):
        call(0, 1)
    call(1.1, 2)
    call(2.1, 3)
    call(2.2, 3.1)
    # A call the ledger answered costs no latency and links nothing.
    call(3.2, 3.2, LLMCall.Outcome.CACHED)
    assert chain([run]) == 3
    call(3.2, 4)  # one more after the last: the chain grows
    assert chain([run]) == 4


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
