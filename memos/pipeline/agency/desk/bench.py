"""``bench_run --workflow agency``: one whole agency run against the fake server (in a process of its own),
measured against its bounds.

- ``wall_s``: the run's wall time, inline in this process (one worker debating every move at once).
- ``critical_path_s``: the chain of dependent calls times the latency: F1 and F2 (one call, in parallel),
  the personas (one call, in parallel), and per move 1 + 1 + 2 x (R - 1) + 1 (the opening critique, round 1's
  answers, each later round's critique and answers, the final scores); the blind scores run beside the
  opening, off the path, and the moves run side by side; then the jury's two threads (the rejection, then
  the rulings), its three moves side by side.
- ``sequential_s``: the seed's own order at the same latency, moves one after another (each still running
  its three threads in parallel): 1 + 1 + moves x (1 + 1 + 2 x (R - 1) + 1) calls, then the jury's two calls
  per recommended move; computed, not run.
- ``calls``: LLM calls paid for; ``prompt_tokens``: their prompt tokens; ``render_s``, ``ratio`` and the rest
  as every workflow's bench (memos.services.benchmarks); ``cpu_ms_per_call``: this process's
  CPU time (the pipeline's own work: rendering, validation, rows, the HTTP client) per call.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Sum

from agents.agency.config import JURY_CALLS_PER_MOVE, AgencyConfig
from agents.agency.outputs import RankingOutput
from agents.agency.ranking import top_overlap
from memos.models import AgentStep, LLMCall, Move, Run
from memos.pipeline import driver
from memos.pipeline.agency.final import agency_report
from memos.services.benchmarks import fake_endpoints, measures, run_timed
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run


def agency_bench(user: User, options: dict[str, Any]) -> dict[str, Any]:
    try:
        brief = create_brief(
            owner=user,
            ticker=options["ticker"],
            # A new question each time: never a cache hit.
            question=f"Benchmark {uuid.uuid4().hex[:8]}: which moves should the company make?",
        )
        run = start_run(brief=brief, user=user, profile=options["profile"], enqueue=False, workflow="agency")
    except ServiceError as exc:
        raise SystemExit(f"bench_run: {exc}") from exc
    latency_ms = float(options["latency_ms"])
    concurrency = options["concurrency"] or 45
    with _fake_endpoints(options):
        timed = run_timed(str(run.pk), print_on_path=options.get("print_on_path", False))
    run = Run.objects.get(pk=run.pk)
    agency = AgencyConfig.model_validate(run.config)
    moves = Move.objects.filter(run=run, merged_into="", debated_at__isnull=False).count()
    per_move = 1 + 1 + 2 * (agency.rounds - 1) + 1
    jury_path = JURY_CALLS_PER_MOVE if agency.jury else 0
    paid = LLMCall.objects.filter(run=run).exclude(outcome="cached")
    seconds = latency_ms / 1000
    return {
        "workflow": "agency",
        "status": run.status,
        "profile": run.profile,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "moves_debated": moves,
        "rounds": agency.rounds,
        "sequential_s": round((1 + 1 + moves * per_move + agency.jury_calls(moves)) * seconds, 3),
        "prompt_tokens": paid.aggregate(total=Sum("tokens_in"))["total"] or 0,
        **measures([run], timed, latency_ms=latency_ms, critical_calls=1 + 1 + per_move + jury_path),
    }


@contextmanager
def _fake_endpoints(options: dict[str, Any]) -> Iterator[None]:
    """The fake server, started in a process of its own (or a thread), as every endpoint of the runs."""
    with fake_endpoints(
        latency_ms=float(options["latency_ms"]),
        concurrency=options["concurrency"] or 45,
        in_process=options["fake_in_process"],
        judges={"scoring": "fake-judge"},
    ):
        yield


def agency_stability(user: User, options: dict[str, Any]) -> dict[str, Any]:
    """``--reruns N``: N runs of one brief, each with the moves in another shuffled order, so every debate is
    asked afresh (the data, the findings and the moves come back from the ledger): each run's top three by
    the moves' merge keys, and how many of them any two runs share (seed 004's rank stability).
    ``--configured-model`` asks the endpoints the settings configure instead of the fake server (what
    scripts/reader-bench.sh's ``stability:TICKER`` case does on the embedded model)."""
    try:
        brief = create_brief(
            owner=user,
            ticker=options["ticker"],
            question=f"Stability {uuid.uuid4().hex[:8]}: which moves should the company make?",
        )
    except ServiceError as exc:
        raise SystemExit(f"bench_run: {exc}") from exc
    tops: list[list[str]] = []
    runs = []
    with ExitStack() as stack:
        if not options["configured_model"]:
            stack.enter_context(_fake_endpoints(options))
        for order in range(1, options["reruns"] + 1):
            try:
                run = start_run(
                    brief=brief,
                    user=user,
                    profile=options["profile"],
                    enqueue=False,
                    workflow="agency",
                    options={"order": order},
                )
            except ServiceError as exc:
                raise SystemExit(f"bench_run: {exc}") from exc
            driver.run_inline(str(run.pk))
            keys = dict(Move.objects.filter(run=run).values_list("move_id", "dedup_key"))
            ranked = RankingOutput.model_validate(AgentStep.objects.get(run=run, key="ranking").output).ranked
            top = [keys[row.move_id] for row in ranked if row.recommended]
            tops.append(top)
            paid = LLMCall.objects.filter(run=run).exclude(outcome="cached").count()
            report = agency_report(run)
            runs.append(
                {
                    "order": order,
                    "status": Run.objects.get(pk=run.pk).status,
                    "calls": paid,
                    "top3": top,
                    "summary": report.summary() if report is not None else "",
                }
            )
    overlaps = [top_overlap(a, b) for i, a in enumerate(tops) for b in tops[i + 1 :]]
    return {
        "workflow": "agency",
        "profile": options["profile"],
        "reruns": runs,
        "top3_overlap_mean": round(sum(overlaps) / len(overlaps), 2) if overlaps else None,
        "top3_overlap_min": min(overlaps) if overlaps else None,
    }
