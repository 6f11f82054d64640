"""``manage.py bench_run --latency-ms L [--profile quick|full] [--json]``: a whole memo run against the fake
OpenAI-compatible server answering every call after L ms, in this process.

It prints the run's wall time, its critical-path bound (the longest chain of dependent LLM calls times L:
one specialist wave per ``concurrency`` specialists, each synthesis attempt, the evaluation), their ratio, and
the calls and tokens used. A ratio near 1 means the pipeline adds almost nothing to the LLM latency it cannot
avoid. Needs the snapshot loaded (``bootstrap_demo``) and Redis (the concurrency bound is shared there).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db.models import Sum

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from agents.memo.outputs import IterationOutput, SpecialistOutput
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.gateway import endpoints
from memos.pipeline.memo.rehearsal import script_for_run
from memos.pipeline.worker import warm_up
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run


class Command(BaseCommand):
    help = "Time a whole memo run against the fake LLM server and compare it with its critical-path bound."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--latency-ms", type=float, default=200.0)
        parser.add_argument("--profile", default="full")
        parser.add_argument("--ticker", default="AAPL")
        parser.add_argument("--concurrency", type=int, help="LLM calls in flight (default: the roster size)")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark's brief and run")

    def handle(self, *args: Any, **options: Any) -> None:
        user, _ = User.objects.get_or_create(username="bench", defaults={"is_active": False})
        try:
            brief = create_brief(
                owner=user,
                ticker=options["ticker"],
                question=f"Benchmark {uuid.uuid4().hex[:8]}: is the thesis intact?",  # never a cache hit
            )
            run = start_run(brief, user=user, profile=options["profile"], enqueue=False)
        except ServiceError as exc:
            self.stderr.write(f"bench_run: {exc}")
            raise SystemExit(2) from exc
        roster = list(run.config["roster"])
        concurrency = options["concurrency"] or len(roster)
        latency_ms = float(options["latency_ms"])
        with (
            FakeLLMServer(latency_ms=latency_ms, script=script_for_run(run)) as server,
            endpoints(_settings(server.url, concurrency)),
        ):
            warm_up()  # the steady state of a running worker (DeskWorker), not a cold start
            started = time.perf_counter()
            driver.run_inline(str(run.pk))
            wall = time.perf_counter() - started
        report = _report(Run.objects.get(pk=run.pk), wall, latency_ms, concurrency)
        if not options["keep"]:
            run.delete()
            brief.delete()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            for key, value in report.items():
                self.stdout.write(f"{key:<22} {value}")
        if report["status"] != Run.Status.DONE:
            raise SystemExit(1)


def _settings(url: str, concurrency: int) -> LLMSettings:
    return LLMSettings(
        default=Endpoint(base_url=url, api_key="bench-key", model="fake-synthesizer"),
        roles={Role.EVALUATOR: Endpoint(base_url=url, api_key="bench-key", model="fake-evaluator")},
        max_concurrency=concurrency,
        max_retries=0,
        loopback_only=True,
    )


def _report(run: Run, wall: float, latency_ms: float, concurrency: int) -> dict[str, Any]:
    done = AgentStep.objects.filter(run=run, status=AgentStep.Status.DONE)
    asked = sum(
        1
        for raw in done.filter(kind="specialist").values_list("output", flat=True)
        if SpecialistOutput.model_validate(raw).asked_model
    )
    attempts = sum(
        len(IterationOutput.model_validate(raw).attempts)
        for raw in done.filter(kind="iteration").values_list("output", flat=True)
    )
    chain = math.ceil(asked / concurrency) + attempts + 1  # specialist waves, synthesis attempts, evaluation
    bound = chain * latency_ms / 1000
    calls = LLMCall.objects.filter(run=run)
    tokens = calls.aggregate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    return {
        "status": run.status,
        "profile": run.profile,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "specialists_asked": asked,
        "synthesis_attempts": attempts,
        "critical_path_calls": chain,
        "wall_s": round(wall, 3),
        "critical_path_s": round(bound, 3),
        "ratio": round(wall / bound, 3) if bound else None,
        "llm_calls": calls.exclude(outcome="cached").count(),
        "tokens_in": tokens["tokens_in"] or 0,
        "tokens_out": tokens["tokens_out"] or 0,
    }
