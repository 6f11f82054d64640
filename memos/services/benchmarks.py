"""What ``bench_run`` measures for every workflow, the same way: one whole run, inline in this process (the
steady state of a worker: ``warm_up`` first), against the fake OpenAI-compatible server in a process of its
own (or a thread of this one) answering every call after L ms.

- ``wall_s``: the run's wall time, its frozen files included;
- ``critical_path_s``: the longest chain of the run's paid calls each starting after the one before it
  ended (read from the ledger; a wave the concurrency bound forces counts), times L; a workflow whose bench
  knows its plan's bound better may give its own;
- ``ratio``: wall over critical path;
- ``cpu_ms_per_call``: this process's CPU over the paid calls (the pipeline's own work: prompts, validation,
  rows, the HTTP client, freezing and printing);
- ``render_s``: of the wall, the time spent making frozen versions' files before each freeze, on the path
  (memos.services.version_files); ``print_s``: the time spent printing their PDFs after the freeze, off
  the path, as a worker does on its printer thread; ``files_ready_s``: from the start until every file
  was stored;
- ``calls``, ``tokens_in``, ``tokens_out``: what the run paid for.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Sum
from django.test.utils import override_settings

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.child_process import FakeLLMServerProcess
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import VERDICT_ROLES
from memos.models import LLMCall, Run
from memos.pipeline.gateway import endpoints
from memos.pipeline.registry import fake_answers
from memos.services import version_files
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist, create_brief, start_run


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float
    render_s: float  # on the path: the frozen files made before the freeze
    print_s: float  # off the path: the PDFs printed after it, on the printer thread
    files_ready_s: float  # from the start until every frozen file was stored


def bench_settings(url: str, concurrency: int, *, judges: Mapping[str, str] | None = None) -> LLMSettings:
    """Every role on the fake server at ``url``; ``judges`` maps a role to the model that answers it (by
    default every verdict role on a judge model named apart from the analysts', as a desk configures it)."""
    return LLMSettings(
        default=Endpoint(base_url=url, api_key="bench-key", model="fake-analyst"),
        roles={
            role: Endpoint(base_url=url, api_key="bench-key", model=model)
            for role, model in (judges or dict.fromkeys(map(str, VERDICT_ROLES), "fake-judge")).items()
        },
        max_concurrency=concurrency,
        max_retries=0,
        loopback_only=True,
    )


@contextmanager
def fake_endpoints(
    *,
    latency_ms: float,
    concurrency: int,
    in_process: bool = False,
    script: Mapping[str, Sequence[Any]] | None = None,
    judges: Mapping[str, str] | None = None,
) -> Iterator[None]:
    """The fake server, started in a process of its own (or a thread), as every endpoint of the runs."""
    serve = FakeLLMServer if in_process else FakeLLMServerProcess
    with (
        serve(latency_ms=latency_ms, script=script, answers=fake_answers()) as server,
        endpoints(bench_settings(server.url, concurrency, judges=judges)),
    ):
        yield


def run_timed(run_id: str, *, print_on_path: bool = False) -> Timed:
    """Every stage of the run, inline, timed: its wall, this process's CPU, the renders on its path, and the
    PDFs printed after its freezes, as a worker prints them (on its printer thread, whatever PRINT_INLINE
    says). ``print_on_path`` prints them at each freeze's commit instead, in the run's path: how the desk
    froze files before the printer (``bench_run --print-on-path``, for a before-and-after)."""
    # Imported here: the driver loads the registry, which loads every workflow's surface.
    from memos.pipeline import driver
    from memos.pipeline.worker import warm_up

    warm_up()
    rendered, printed = version_files.render_seconds(), version_files.print_seconds()
    with override_settings(PRINT_INLINE=print_on_path):
        started, cpu = time.perf_counter(), time.process_time()
        driver.run_inline(run_id)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        version_files.wait_for_prints()
        ready = time.perf_counter() - started
    return Timed(
        wall_s=wall,
        cpu_s=cpu,
        render_s=version_files.render_seconds() - rendered,
        print_s=version_files.print_seconds() - printed,
        files_ready_s=ready,
    )


def chain(runs: Sequence[Run]) -> int:
    """The longest chain of the runs' paid calls, each starting after the one before it ended."""
    spans = sorted(
        (created - timedelta(milliseconds=duration), created)
        for created, duration in LLMCall.objects.filter(run__in=runs)
        .exclude(outcome=LLMCall.Outcome.CACHED)
        .values_list("created_at", "duration_ms")
    )
    longest: list[int] = []
    for index, (start, _) in enumerate(spans):
        before = [longest[j] for j in range(index) if spans[j][1] <= start]
        longest.append(1 + max(before, default=0))
    return max(longest, default=0)


def measures(runs: Sequence[Run], timed: Timed, *, latency_ms: float, critical_calls: int) -> dict[str, Any]:
    """The fields every workflow's bench reports, over the calls of ``runs``."""
    paid = LLMCall.objects.filter(run__in=runs).exclude(outcome=LLMCall.Outcome.CACHED)
    tokens = paid.aggregate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    calls = paid.count()
    critical = critical_calls * latency_ms / 1000
    return {
        "wall_s": round(timed.wall_s, 3),
        "critical_path_calls": critical_calls,
        "critical_path_s": round(critical, 3),
        "ratio": round(timed.wall_s / critical, 3) if critical else None,
        "render_s": round(timed.render_s, 3),
        "print_s": round(timed.print_s, 3),
        "files_ready_s": round(timed.files_ready_s, 3),
        "cpu_ms_per_call": round(timed.cpu_s * 1000 / max(1, calls), 2),
        "calls": calls,
        "tokens_in": tokens["tokens_in"] or 0,
        "tokens_out": tokens["tokens_out"] or 0,
    }


# Calls in flight when the bench is not told: enough that no workflow's fan-out waits on the bound, so the
# ledger's chain is the plan's own.
DEFAULT_CONCURRENCY = 16


def bench_workflow(owner: User, workflow: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """One whole run of ``workflow`` on a new brief (about ``options["ticker"]``, or the workflow's default
    watchlist, or ``options["symbols"]``), measured. Its profile is ``options["profile"]`` where the workflow
    has one of that name, else its first."""
    from memos.pipeline.registry import workflow_for

    flow = workflow_for(workflow)
    offered = list(flow.profiles())
    profile = options["profile"] if options["profile"] in offered else offered[0]
    question = f"Benchmark {uuid.uuid4().hex[:8]}: where does the case stand?"  # never a cache hit
    try:
        if flow.subject == "watchlist":
            symbols = list(options.get("symbols") or flow.default_watchlist())
            run = ask_watchlist(
                owner=owner,
                symbols=symbols,
                question=question,
                workflow=workflow,
                profile=profile,
                enqueue=False,
            )
        else:
            brief = create_brief(owner=owner, ticker=options["ticker"], question=question)
            run = start_run(brief=brief, user=owner, profile=profile, enqueue=False, workflow=workflow)
    except ServiceError as exc:
        raise SystemExit(f"bench_run: {exc}") from exc
    latency_ms = float(options["latency_ms"])
    concurrency = options.get("concurrency") or DEFAULT_CONCURRENCY
    with fake_endpoints(
        latency_ms=latency_ms, concurrency=concurrency, in_process=options["fake_in_process"]
    ):
        timed = run_timed(str(run.pk), print_on_path=options.get("print_on_path", False))
    run = Run.objects.get(pk=run.pk)
    return {
        "workflow": workflow,
        "status": run.status,
        "profile": profile,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        **measures([run], timed, latency_ms=latency_ms, critical_calls=chain([run])),
    }
