"""A run's page, drawn from its workflow's stages, and its step documents (in the drawer or as a page).

A user who may not see a run gets a 404 for the run, its steps and its socket alike (services.access).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe
from pydantic import ValidationError

from memos.models import AgentStep
from memos.pipeline.registry import workflow_for
from memos.services.access import visible_runs
from memos.views.documents import DOCUMENTS
from memos.views.refs import cited_ids, resolve
from memos.views.users import user_of

# run.js asks for a step document with this header to get the bare fragment for its drawer.
FRAGMENT_HEADER = "X-Desk-Fragment"
UNFINISHED = "memos/step_documents/unfinished.html"


@dataclass(frozen=True)
class StageBand:
    key: str
    label: str
    blurb: str
    steps: list[AgentStep]

    @property
    def done(self) -> int:
        return sum(1 for step in self.steps if step.status == AgentStep.Status.DONE)


@require_safe
@login_required
def run_page(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = get_object_or_404(
        visible_runs(user_of(request)).select_related("brief__company", "created_by"), pk=run_id
    )
    workflow = workflow_for(run.workflow)
    steps = list(run.steps.order_by("position", "key"))
    bands = [
        StageBand(stage.name, stage.label, stage.blurb, [s for s in steps if s.stage == stage.name])
        for stage in workflow.stages
    ]
    return render(request, "memos/run.html", {"run": run, "bands": bands, "notices": workflow.notices(steps)})


def step_context(step: AgentStep) -> tuple[str, dict[str, Any]]:
    """The template and context of a step's document; an unfinished or unreadable step shows as such."""
    run = step.run
    base: dict[str, Any] = {"step": step, "run": run}
    documents = DOCUMENTS.get(run.workflow)
    if step.status != AgentStep.Status.DONE or documents is None or step.kind not in documents.builders:
        return UNFINISHED, base
    kind = workflow_for(run.workflow).kind(step.kind)
    try:
        output = kind.output.model_validate(step.output)
    except ValidationError:
        return UNFINISHED, base | {"unreadable": True}
    # Only what the run was shown resolves: an id the model picked from elsewhere in the fact store is
    # shown as unresolved, never as a linked (and so seemingly vouched-for) figure.
    evidence = documents.evidence_ids(run)
    refs = resolve(cited_ids(output) & evidence, evidence)
    return kind.template, base | {"kind": kind.name, "refs": refs} | documents.builders[step.kind](
        output, step, refs
    )


@require_safe
@login_required
def step_document(request: HttpRequest, run_id: UUID, step_id: int) -> HttpResponseBase:
    step = get_object_or_404(
        AgentStep.objects.select_related("run__brief__company").filter(
            run__in=visible_runs(user_of(request))
        ),
        pk=step_id,
        run_id=run_id,
    )
    template, context = step_context(step)
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    response = render(request, template if fragment else "memos/step_page.html", context | {"body": template})
    patch_vary_headers(response, [FRAGMENT_HEADER])
    return response
