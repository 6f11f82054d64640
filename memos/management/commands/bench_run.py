"""``manage.py bench_run --latency-ms L [--profile P] [--runs N] [--sequential] [--json]``: whole memo runs
against the fake OpenAI-compatible server answering every call after L ms. ``--workflow agency`` measures an
agency run instead (memos.pipeline.agency.desk.bench), ``--workflow week [--as-of DATE]`` a whole week
(memos.pipeline.week.desk.bench), ``--workflow deck|screen [--symbols A,B]`` one run of that workflow
against the critical path its ledger shows (memos.services.benchmarks). Every workflow's JSON has
``wall_s``, ``critical_path_s``, ``ratio``, ``render_s`` (the frozen files made on the path),
``print_s`` (their PDFs, printed after the freeze), ``cpu_ms_per_call`` and ``calls``.

The fake server runs in a process of its own, as any real endpoint does (``--fake-in-process`` serves it
from a thread of this one instead, where its request handling competes with the pipeline for the GIL and
is counted as overhead).

For each run it measures the wall time and its critical-path bound (the longest chain of dependent LLM
calls times L: one specialist wave per ``concurrency`` specialists, each synthesis attempt, the
evaluation), their ratio, and the orchestration overhead per LLM call ((wall - bound) / calls): what the
pipeline adds to the latency it cannot avoid. ``--runs N`` repeats the run and reports the median and the
spread (min, max); ``--sequential`` also runs the same plan one call at a time, so the parallel speed-up is
printed beside it. Needs the snapshot loaded (``bootstrap_demo``) and Redis (the concurrency bound is
shared there). Each run freezes a version of its benchmark brief like any completed run, and frozen versions
are never deleted, so the briefs stay (owned by the inactive user ``bench``): run it against a scratch
database (scripts/with-services.sh), not the desk people use.
"""

from __future__ import annotations

import json
import math
import statistics
import uuid
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from agents.memo.outputs import IterationOutput, SpecialistOutput
from memos.models import AgentStep, Run
from memos.pipeline.agency.desk import agency_bench, agency_stability
from memos.pipeline.registry import rehearsal
from memos.pipeline.week.desk import week_bench
from memos.services.benchmarks import Timed, bench_workflow, fake_endpoints, measures, run_timed
from memos.services.errors import ServiceError
from memos.services.notifications import wait_for_mail
from memos.services.runs import create_brief, start_run

SUMMARISED = ("wall_s", "ratio", "overhead_ms_per_call", "render_s", "print_s", "cpu_ms_per_call")


class Command(BaseCommand):
    help = "Time whole memo runs against the fake LLM server and compare them with their critical-path bound."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--workflow", choices=["memo", "deck", "agency", "screen", "week"], default="memo"
        )
        parser.add_argument(
            "--as-of", dest="as_of", help="week: the week ending on this session (YYYY-MM-DD)"
        )
        parser.add_argument("--latency-ms", type=float, default=200.0)
        parser.add_argument("--profile", default="full")
        parser.add_argument("--ticker", default="AAPL")
        parser.add_argument(
            "--symbols", help="screen: a watchlist, comma-separated (default: the workflow's own)"
        )
        parser.add_argument("--concurrency", type=int, help="LLM calls in flight (default: the roster size)")
        parser.add_argument(
            "--runs", type=int, default=1, help="runs per mode; the median and spread are shown"
        )
        parser.add_argument(
            "--sequential", action="store_true", help="also run the same plan one call at a time"
        )
        parser.add_argument(
            "--reruns", type=int, default=0, help="agency: reruns with the moves shuffled, for rank stability"
        )
        parser.add_argument(
            "--configured-model",
            action="store_true",
            help="agency --reruns: ask the endpoints the settings configure (the embedded model by default), "
            "not the fake server",
        )
        parser.add_argument(
            "--print-on-path",
            action="store_true",
            help="print the frozen versions' PDFs at each freeze, in the run's path, as the desk did before "
            "its printer thread (a before-and-after)",
        )
        parser.add_argument("--json", action="store_true")
        parser.add_argument(
            "--fake-in-process",
            action="store_true",
            help="serve the fake LLM from a thread of this process (its work then counts as overhead)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["runs"] < 1:
            self.stderr.write("bench_run: --runs must be at least 1")
            raise SystemExit(2)
        user, _ = User.objects.get_or_create(username="bench", defaults={"is_active": False})
        if options["workflow"] == "agency" and options["reruns"]:
            self._stability(user, options)
            return
        if options["workflow"] == "agency":
            self._agency(user, options)
            return
        if options["workflow"] in ("deck", "screen"):
            symbols = [s for s in (options["symbols"] or "").split(",") if s.strip()]
            one = bench_workflow(user, options["workflow"], options | {"symbols": symbols})
            wait_for_mail()
            self.stdout.write(json.dumps(one, indent=2))
            if one["status"] not in (Run.Status.DONE, Run.Status.NEEDS_REVIEW):
                raise SystemExit(1)
            return
        if options["workflow"] == "week":
            week = week_bench(options)
            wait_for_mail()
            self.stdout.write(json.dumps(week, indent=2))
            if week["status"] != Run.Status.DONE:
                raise SystemExit(1)
            return
        bench = _Bench(user, options)
        modes = {"parallel": options["concurrency"]}
        if options["sequential"]:
            modes["sequential"] = 1
        report: dict[str, Any] = {
            "profile": options["profile"],
            "latency_ms": float(options["latency_ms"]),
            "runs": options["runs"],
            "fake_server": "in-process" if options["fake_in_process"] else "own process",
        }
        for mode, concurrency in modes.items():
            report[mode] = _summary([bench.run(concurrency) for _ in range(options["runs"])])
        if options["sequential"]:
            report["speedup"] = round(
                report["sequential"]["wall_s"]["median"] / report["parallel"]["wall_s"]["median"], 2
            )
        wait_for_mail()  # the runs' notices, e-mailed in the background as a worker's are, leave first
        self._print(report, as_json=options["json"])
        if any(r["status"] != Run.Status.DONE for mode in modes for r in report[mode]["each"]):
            raise SystemExit(1)

    def _stability(self, user: User, options: dict[str, Any]) -> None:
        report = agency_stability(user, options)
        wait_for_mail()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            for run in report["reruns"]:
                self.stdout.write(
                    f"order {run['order']}: {run['calls']} calls, top 3 {', '.join(run['top3'])}"
                )
                self.stdout.write(run["summary"])
            self.stdout.write(
                f"top-3 overlap between reruns: mean {report['top3_overlap_mean']}, "
                f"min {report['top3_overlap_min']}"
            )
        if any(run["status"] != Run.Status.DONE for run in report["reruns"]):
            raise SystemExit(1)

    def _agency(self, user: User, options: dict[str, Any]) -> None:
        report = agency_bench(user, options)
        wait_for_mail()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(
                f"agency, {report['profile']} profile, {report['moves_debated']} moves x {report['rounds']} "
                f"rounds, fake LLM answering after {report['latency_ms']:.0f} ms, {report['concurrency']} "
                f"calls at once\n"
                f"  wall {report['wall_s']} s; critical path {report['critical_path_s']} s "
                f"({report['wall_s'] / report['critical_path_s']:.2f}x); the seed's order "
                f"{report['sequential_s']} s ({report['sequential_s'] / report['wall_s']:.1f}x slower)\n"
                f"  {report['calls']} calls, {report['prompt_tokens']} prompt tokens, "
                f"{report['cpu_ms_per_call']} ms of this process's CPU per call"
                if report["critical_path_s"] and report["wall_s"]
                else json.dumps(report)
            )
        if report["status"] != Run.Status.DONE:
            raise SystemExit(1)

    def _print(self, report: dict[str, Any], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(
            f"{report['profile']} profile, fake LLM answering after {report['latency_ms']:.0f} ms, "
            f"{report['runs']} run(s) per mode, fake server in {report['fake_server']}"
        )
        for mode in ("parallel", "sequential"):
            if mode not in report:
                continue
            summary = report[mode]
            first = summary["each"][0]
            self.stdout.write(
                f"{mode:<11} {first['llm_calls']} calls, {first['concurrency']} at once, critical path "
                f"{first['critical_path_calls']} calls = {first['critical_path_s']} s"
            )
            for key in SUMMARISED:
                spread = summary[key]
                median, low, high = (str(spread[k]) for k in ("median", "min", "max"))
                self.stdout.write(f"  {key:<21} median {median:<8} min {low:<8} max {high}")
        if "speedup" in report:
            self.stdout.write(f"parallel speed-up over one call at a time: {report['speedup']}x")


class _Bench:
    def __init__(self, user: User, options: dict[str, Any]) -> None:
        self.user = user
        self.options = options

    def run(self, concurrency: int | None) -> dict[str, Any]:
        """One whole run at this concurrency (None: as many as the roster), measured."""
        options = self.options
        try:
            brief = create_brief(
                owner=self.user,
                ticker=options["ticker"],
                question=f"Benchmark {uuid.uuid4().hex[:8]}: is the thesis intact?",  # never a cache hit
            )
            run = start_run(
                brief=brief, user=self.user, profile=options["profile"], enqueue=False, workflow="memo"
            )
        except ServiceError as exc:
            raise SystemExit(f"bench_run: {exc}") from exc
        in_flight = concurrency or len(run.config["roster"])
        latency_ms = float(options["latency_ms"])
        with fake_endpoints(
            latency_ms=latency_ms,
            concurrency=in_flight,
            in_process=options["fake_in_process"],
            script=rehearsal(run),
        ):
            timed = run_timed(str(run.pk), print_on_path=options["print_on_path"])
        return _report(Run.objects.get(pk=run.pk), timed, latency_ms, in_flight)


def _summary(reports: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for key in SUMMARISED:
        values = [r[key] for r in reports if r[key] is not None]  # no ratio without latency
        summary[key] = (
            {"median": round(statistics.median(values), 3), "min": min(values), "max": max(values)}
            if values
            else {"median": None, "min": None, "max": None}
        )
    summary["each"] = reports
    return summary


def _report(run: Run, timed: Timed, latency_ms: float, concurrency: int) -> dict[str, Any]:
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
    measured = measures([run], timed, latency_ms=latency_ms, critical_calls=chain)
    paid, bound = measured["calls"], measured["critical_path_s"]
    return {
        "workflow": "memo",
        "status": run.status,
        "profile": run.profile,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "specialists_asked": asked,
        "synthesis_attempts": attempts,
        **measured,
        "overhead_ms_per_call": round((timed.wall_s - bound) * 1000 / paid, 1) if paid else None,
        "llm_calls": paid,
    }
