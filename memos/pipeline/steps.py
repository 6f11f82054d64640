"""Step and run state changes, each followed (after commit) by a live event carrying the redrawn fragment."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from agents.memo.roster import SPECIALISTS
from memos.events import RunEvent, send_after_commit
from memos.models import AgentStep, Run


def publish_step(step: AgentStep) -> None:
    html = render_to_string("memos/fragments/step.html", {"step": step, "run": step.run})
    send_after_commit(RunEvent(kind="agent", run_id=str(step.run_id), target=f"step-{step.pk}", html=html))


def publish_run(run: Run) -> None:
    html = render_to_string("memos/fragments/run_status.html", {"run": run})
    send_after_commit(RunEvent(kind="status", run_id=str(run.pk), target="run-status", html=html))


@dataclass(frozen=True)
class PlannedStep:
    layer: str
    key: str
    title: str
    role: str = ""
    position: int = 0


def plan(roster: Iterable[str], iterations: int) -> list[PlannedStep]:
    """Every step a run takes, in order: what the run page draws from the start, and each step's title."""
    layers = AgentStep.Layer
    planned = [PlannedStep(layers.DATA, "evidence", "Evidence gathered by code")]
    planned += [PlannedStep(layers.SPECIALISTS, n, SPECIALISTS[n].title, n, i) for i, n in enumerate(roster)]
    planned += [PlannedStep(layers.SYNTHESIS, "audit", "Fact-stability audit (code)")]
    planned += [
        PlannedStep(layers.SYNTHESIS, f"iteration-{n}", f"Synthesis iteration {n}", "synthesizer", n)
        for n in range(1, iterations + 1)
    ]
    planned += [PlannedStep(layers.EVALUATION, "evaluation", "Evaluator's report", "evaluator")]
    planned += [PlannedStep(layers.MEMO, "memo", "Investment memo")]
    return planned


def ensure_step(run: Run, layer: str, key: str) -> AgentStep:
    """The run's step; ``start_run`` creates them all, so this finds it (or makes it from the plan)."""
    roster = run.config.get("roster", list(SPECIALISTS))
    planned = [
        p for p in plan(roster, int(run.config.get("iterations", 3))) if (p.layer, p.key) == (layer, key)
    ]
    if not planned:
        raise ValueError(f"the run's plan has no step {layer}/{key}")
    step, created = AgentStep.objects.get_or_create(
        run=run,
        layer=layer,
        key=key,
        defaults={"title": planned[0].title, "role": planned[0].role, "position": planned[0].position},
    )
    if created:
        publish_step(step)
    return step


def start_step(step: AgentStep) -> None:
    with transaction.atomic():
        step.status = AgentStep.Status.RUNNING
        step.started_at = step.started_at or timezone.now()
        step.error = ""
        step.save(update_fields=["status", "started_at", "error"])
        publish_step(step)


def finish_step(step: AgentStep, output: dict[str, Any], *, status: str = AgentStep.Status.DONE) -> None:
    with transaction.atomic():
        step.status = status
        step.output = output
        step.finished_at = timezone.now()
        step.save(update_fields=["status", "output", "finished_at"])
        publish_step(step)


def fail_step(step: AgentStep, error: str) -> None:
    with transaction.atomic():
        step.status = AgentStep.Status.FAILED
        step.error = error
        step.finished_at = timezone.now()
        step.save(update_fields=["status", "error", "finished_at"])
        publish_step(step)


def set_run(run: Run, **fields: Any) -> None:
    """Update the run's row (status, stage, message, timestamps) and tell its page."""
    with transaction.atomic():
        for name, value in fields.items():
            setattr(run, name, value)
        run.save(update_fields=list(fields))
        # The ledger adds to tokens_spent in the database as calls finish: show that, not this copy's.
        run.refresh_from_db(fields=["tokens_spent"])
        publish_run(run)


def touch(run_id: str) -> None:
    Run.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())
