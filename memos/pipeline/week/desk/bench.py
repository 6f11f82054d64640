"""``bench_run --workflow week``: one whole week (the screen, a quick memo on each flagged name, the digest)
against the fake server in a process of its own, measured against its critical path.

- ``wall_s``: the week's wall time, inline in this process (one worker, its parts run in it).
- ``critical_path_s``: the screen's chain of dependent calls, then the longest memo's, then the longest deck
  cycle's, each times the latency. A part's chain is read from its ledger: the longest sequence of its
  calls each starting after the one before ended (a wave the concurrency bound forces counts, as in the
  memo's bound).
- ``calls``: LLM calls paid for; ``cpu_ms_per_call``: this process's CPU time per call (the pipeline's own
  work: rendering, validation, rows, the HTTP client, freezing and printing the versions).

Each week runs under a new inactive owner, so its briefs (and the nonces that fence their prompts) are new:
nothing is answered by the ledger.
"""

from __future__ import annotations

import time
import uuid
from datetime import date, timedelta
from typing import Any

from django.contrib.auth.models import User

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.child_process import FakeLLMServerProcess
from agents.llm.fakes.server import FakeLLMServer
from memos.models import LLMCall, Run
from memos.pipeline.gateway import endpoints
from memos.pipeline.registry import fake_answers
from memos.pipeline.week.plan import NAME as WEEK
from memos.pipeline.week.profiles import WEEKLY
from memos.pipeline.week.workflow import screened_watchlist
from memos.pipeline.worker import warm_up
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist


def chain(run: Run) -> int:
    """The longest chain of the run's calls, each starting after the one before it ended."""
    spans = sorted(
        (created - timedelta(milliseconds=duration), created)
        for created, duration in LLMCall.objects.filter(run=run)
        .exclude(outcome=LLMCall.Outcome.CACHED)
        .values_list("created_at", "duration_ms")
    )
    longest: list[int] = []
    for index, (start, _) in enumerate(spans):
        before = [longest[j] for j in range(index) if spans[j][1] <= start]
        longest.append(1 + max(before, default=0))
    return max(longest, default=0)


def week_bench(options: dict[str, Any]) -> dict[str, Any]:
    # Imported here: the driver loads the registry, which loads this workflow's surface.
    from memos.pipeline import driver

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
    serve = FakeLLMServer if options["fake_in_process"] else FakeLLMServerProcess
    with (
        serve(latency_ms=latency_ms, answers=fake_answers()) as server,
        endpoints(_settings(server.url, concurrency)),
    ):
        warm_up()
        started, cpu = time.perf_counter(), time.process_time()
        driver.run_inline(str(run.pk))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    run = Run.objects.get(pk=run.pk)
    parts = list(Run.objects.filter(part_of=run))
    by_workflow: dict[str, list[int]] = {}
    for part in parts:
        by_workflow.setdefault(part.workflow, []).append(chain(part))
    links = sum(max(chains) for chains in by_workflow.values())
    paid = LLMCall.objects.filter(run__part_of=run).exclude(outcome=LLMCall.Outcome.CACHED).count()
    critical = links * latency_ms / 1000
    return {
        "workflow": WEEK,
        "status": run.status,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "as_of": run.config.get("as_of"),
        "parts": {name: len(chains) for name, chains in by_workflow.items()},
        "chains": by_workflow,
        "wall_s": round(wall, 3),
        "critical_path_s": round(critical, 3),
        "ratio": round(wall / critical, 3) if critical else None,
        "calls": paid,
        "cpu_ms_per_call": round(cpu * 1000 / max(1, paid), 2),
    }


def _settings(url: str, concurrency: int) -> LLMSettings:
    return LLMSettings(
        default=Endpoint(base_url=url, api_key="bench-key", model="fake-analyst"),
        roles={"evaluator": Endpoint(base_url=url, api_key="bench-key", model="fake-judge")},
        max_concurrency=concurrency,
        max_retries=0,
        loopback_only=True,
    )
