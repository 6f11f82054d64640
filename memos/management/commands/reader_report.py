"""``manage.py reader_report [RUN_ID ...] [--json]``: what readers got of finished runs' prose.

For each run (by default every finished run, oldest first): the sentences its writers wrote, those a reader
is not shown (withheld: a figure typed that no fact backs, another script than the brief's, a figure's place
left empty or a word babbled over and over: agents.text.blanks), those code
repaired first, by lever (a typed number written as the fact that backs it, a sentence the writer rewrote
when asked again, a falsifier written from its binding), repeated sentences collapsed, sections left empty,
and what the repairs cost (re-ask calls and their seconds) beside the run's own calls and wall time.
``scripts/reader-bench.sh`` runs quick memos and decks on the embedded model and prints this.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from dataclasses import asdict, dataclass
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Sum

from memos.models import LLMCall, Run
from memos.pipeline.reader_text import REASK_PROMPT
from memos.pipeline.registry import workflow_for

PAID = (LLMCall.Outcome.OK, LLMCall.Outcome.INVALID, LLMCall.Outcome.ERROR, LLMCall.Outcome.TIMEOUT)


@dataclass(frozen=True)
class RunReport:
    run: str
    workflow: str
    ticker: str
    profile: str
    status: str
    sentences: int
    withheld: int
    typed: int  # withheld as the model wrote them, before any repair
    resolved: int
    reasked: int
    bound: int
    repeated: int
    empty: list[str]
    calls: int
    reask_calls: int
    reask_seconds: float
    wall_seconds: float

    @property
    def share(self) -> float:
        return self.withheld / self.sentences if self.sentences else 0.0


class Command(BaseCommand):
    help = "Withheld and repaired sentences of finished runs, by lever, with the calls the repairs cost."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("runs", nargs="*", help="run ids (default: every finished run)")
        parser.add_argument("--json", action="store_true", help="one JSON object per run")

    def handle(self, *args: Any, **options: Any) -> None:
        runs = Run.objects.select_related("brief__company").order_by("created_at")
        if options["runs"]:
            runs = runs.filter(pk__in=options["runs"])
            if runs.count() != len(set(options["runs"])):
                raise CommandError("unknown run id")
        else:
            runs = runs.filter(status__in=[Run.Status.DONE, Run.Status.NEEDS_REVIEW])
        reports = [report for run in runs if (report := _report(run)) is not None]
        if options["json"]:
            for report in reports:
                self.stdout.write(json.dumps(asdict(report) | {"share": round(report.share, 4)}))
            return
        self.stdout.write(
            f"{'run':8} {'workflow':8} {'ticker':6} {'withheld':>14} {'typed':>5} {'resolved':>8} "
            f"{'re-asked':>8} {'bound':>5} {'repeats':>7} {'empty':>5} {'calls':>5} {'re-asks':>7} "
            f"{'re-ask s':>8} {'wall s':>7}"
        )
        for r in reports:
            withheld = f"{r.withheld}/{r.sentences} {r.share:.0%}"
            self.stdout.write(
                f"{r.run[:8]:8} {r.workflow:8} {r.ticker:6} {withheld:>14} "
                f"{r.typed:>5} {r.resolved:>8} {r.reasked:>8} {r.bound:>5} {r.repeated:>7} {len(r.empty):>5} "
                f"{r.calls:>5} {r.reask_calls:>7} {r.reask_seconds:>8.1f} {r.wall_seconds:>7.0f}"
            )
            if r.empty:
                self.stdout.write(f"{'':8} empty: {', '.join(r.empty)}")


def _report(run: Run) -> RunReport | None:
    counting = workflow_for(run.workflow).reader_text
    if counting is None:
        return None
    sections = counting(run)
    if not sections:
        return None
    paid = LLMCall.objects.filter(run=run, outcome__in=PAID)
    reasks = paid.filter(prompt_name=REASK_PROMPT)
    reask_ms = reasks.aggregate(total=Sum("duration_ms"))["total"] or 0
    started, finished = run.started_at or run.created_at, run.finished_at
    company = run.brief.company
    return RunReport(
        run=str(run.pk),
        workflow=run.workflow,
        ticker=company.ticker if company is not None else "",
        profile=run.profile,
        status=run.status,
        sentences=sum(s.sentences for s in sections),
        withheld=sum(s.withheld for s in sections),
        typed=sum(s.typed for s in sections),
        resolved=sum(s.resolved for s in sections),
        reasked=sum(s.reasked for s in sections),
        bound=sum(s.bound for s in sections),
        repeated=sum(s.repeated for s in sections),
        empty=[s.section for s in sections if s.empty],
        calls=paid.count(),
        reask_calls=reasks.count(),
        reask_seconds=reask_ms / 1000,
        wall_seconds=(finished - started).total_seconds() if finished is not None else 0.0,
    )
