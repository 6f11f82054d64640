"""``bench_run --workflow week``: one whole week (the screen, a quick memo on each flagged name, the digest)
against the fake server in a process of its own, measured against its critical path.

- ``wall_s``: the week's wall time, inline in this process (one worker, its parts run in it).
- ``critical_path_s``: the screen's chain of dependent calls, then the longest memo's, then the longest deck
  cycle's, each times the latency. A part's chain is read from its ledger: the longest sequence of its
  calls each starting after the one before ended (a wave the concurrency bound forces counts, as in the
  memo's bound).
- the rest as every workflow's bench (memos.services.benchmarks): ``calls``, ``cpu_ms_per_call``,
  ``render_s`` (the versions' files, the screen's report among them), tokens.

Each week runs under a new inactive owner, so its briefs (and the nonces that fence their prompts) are new:
nothing is answered by the ledger.
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from django.contrib.auth.models import User

from memos.models import Run
from memos.pipeline.week.plan import NAME as WEEK
from memos.pipeline.week.profiles import WEEKLY
from memos.pipeline.week.workflow import screened_watchlist
from memos.services.benchmarks import chain, fake_endpoints, measures, run_timed
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist


def week_bench(options: dict[str, Any]) -> dict[str, Any]:
    owner = User.objects.create_user(f"bench-week-{uuid.uuid4().hex[:8]}", is_active=False)
    latency_ms = float(options["latency_ms"])
    concurrency = options["concurrency"] or 3
    as_of = date.fromisoformat(options["as_of"]) if options.get("as_of") else None
    try:
        run = ask_watchlist(
            owner=owner,
            symbols=screened_watchlist(),
            question="Benchmark: the desk's week",
            workflow=WEEK,
            profile=WEEKLY,
            options={"as_of": as_of.isoformat() if as_of else None},
            enqueue=False,
            scheduled=True,
        )
    except ServiceError as exc:
        raise SystemExit(f"bench_run: {exc}") from exc
    with fake_endpoints(
        latency_ms=latency_ms, concurrency=concurrency, in_process=options["fake_in_process"]
    ):
        timed = run_timed(str(run.pk), print_on_path=options.get("print_on_path", False))
    run = Run.objects.get(pk=run.pk)
    parts = list(Run.objects.filter(part_of=run))
    by_workflow: dict[str, list[int]] = {}
    for part in parts:
        by_workflow.setdefault(part.workflow, []).append(chain([part]))
    links = sum(max(chains) for chains in by_workflow.values())
    return {
        "workflow": WEEK,
        "status": run.status,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "as_of": run.config.get("as_of"),
        "parts": {name: len(chains) for name, chains in by_workflow.items()},
        "chains": by_workflow,
        **measures(parts, timed, latency_ms=latency_ms, critical_calls=links),
    }
