"""Step and run state changes, each followed (after commit) by a live event carrying the redrawn fragment."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from memos.events import RunEvent, send_after_commit
from memos.models import AgentStep, Run


def publish_step(step: AgentStep) -> None:
    html = render_to_string("memos/fragments/step.html", {"step": step, "run": step.run})
    send_after_commit(RunEvent(kind="agent", run_id=str(step.run_id), target=f"step-{step.pk}", html=html))


def publish_run(run: Run) -> None:
    html = render_to_string("memos/fragments/run_status.html", {"run": run})
    send_after_commit(RunEvent(kind="status", run_id=str(run.pk), target="run-status", html=html))


def ensure_step(
    run: Run, layer: str, key: str, *, title: str, role: str = "", position: int = 0
) -> AgentStep:
    step, created = AgentStep.objects.get_or_create(
        run=run, layer=layer, key=key, defaults={"title": title, "role": role, "position": position}
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
