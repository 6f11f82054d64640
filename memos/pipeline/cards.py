"""What the run page shows of a run and its steps, rendered from rows, and sent live after commit.

Rendering reads only the rows (a step's card carries the one-line summary the stage stored beside the
output), so anything that changes a run can redraw it without knowing which workflow it belongs to. A running
run's cards are drawn on the events thread (memos.live.events) from copies of the rows taken when they were
published: the stage does not wait on a template, a row it changes afterwards does not change what was
sent, and nothing is read from the database there.
"""

from __future__ import annotations

import copy

from django.template.loader import render_to_string

from memos.live.events import RunEvent, send_after_commit
from memos.models import AgentStep, Run

# What a sealed reader sees in place of an evaluator's scores on a card and on the run's line.
SEALED_SUMMARY = "scored: hidden until you have scored it"
SEALED_LINE = "the evaluator's scores show once you have scored the result yourself"


def run_status_html(run: Run, *, sealed: str = "", tokens: int | None = None) -> str:
    """The run's status line; ``tokens`` (``run_tokens``, read where a query may be made) or read here."""
    spent = run_tokens(run) if tokens is None else tokens
    context = {"run": run, "status_sealed": sealed, "run_tokens": spent}
    return render_to_string("memos/fragments/run_status.html", context)


def run_tokens(run: Run) -> int:
    """What the run's line counts: its own tokens, and its parts' for a workflow that starts parts (one
    query, for those runs only)."""
    # Imported here: the registry loads every workflow's stages, which publish their cards through here.
    from memos.pipeline.registry import workflow_for

    return run.tokens_with_parts if workflow_for(run.workflow).starts_parts else run.tokens_spent


def step_card_html(step: AgentStep, run: Run) -> str:
    return render_to_string("memos/fragments/step.html", {"step": step, "run": run})


def sealed_card(step: AgentStep) -> AgentStep:
    """The step as a sealed reader's card draws it: its summary, which names the scores, replaced."""
    shown = copy.copy(step)
    if shown.summary:
        shown.summary = SEALED_SUMMARY
    return shown


def sealed_kinds(run: Run) -> frozenset[str]:
    # Imported here: the registry loads every workflow's stages, which publish their cards through here.
    from memos.pipeline.registry import workflow_for

    return workflow_for(run.workflow).sealed_kinds


def status_event(run: Run, *, tokens: int | None = None) -> RunEvent:
    seals = bool(sealed_kinds(run))
    spent = run_tokens(run) if tokens is None else tokens
    return RunEvent(
        kind="status",
        run_id=str(run.pk),
        target="run-status",
        html=run_status_html(run, tokens=spent),
        sealed_html=run_status_html(run, sealed=SEALED_LINE, tokens=spent) if seals else "",
    )


def step_event(step: AgentStep, run: Run) -> RunEvent:
    seals = step.kind in sealed_kinds(run)
    return RunEvent(
        kind="agent",
        run_id=str(run.pk),
        target=f"step-{step.pk}",
        html=step_card_html(step, run),
        sealed_html=step_card_html(sealed_card(step), run) if seals else "",
    )


def _drawable(run: Run) -> Run:
    """A copy of the run to draw on the events thread, whose card and line read its brief and company: read
    here if the run was not read with them (the events thread must never query)."""
    _ = run.brief.company
    return copy.copy(run)


def publish_step(step: AgentStep) -> None:
    shown, run = copy.copy(step), _drawable(step.run)
    send_after_commit(lambda: step_event(shown, run))


def publish_status(run: Run) -> None:
    """The status line of a running run already in hand (read with its brief and company)."""
    if not run.is_active:  # its line names the version it froze: a query, made here
        send_after_commit(status_event(run))
        return
    shown, tokens = _drawable(run), run_tokens(run)  # a week's parts are read here, not on that thread
    send_after_commit(lambda: status_event(shown, tokens=tokens))


def publish_run(run_id: str, *, with_steps: bool = False) -> None:
    """The run's status line (and every step's card, after a change that touched many steps)."""
    run = Run.objects.select_related("brief__company").get(pk=run_id)
    # Drawn here: an ended run's line names the version it froze, a query the events thread must not make.
    send_after_commit(status_event(run))
    if with_steps:
        for step in run.steps.order_by("position", "key"):
            send_after_commit(step_event(step, run))


def snapshot(run: Run) -> list[RunEvent]:
    """The run's status and every card: what a (re)connecting page needs to catch up."""
    return [status_event(run)] + [step_event(step, run) for step in run.steps.order_by("position", "key")]
