"""A run's page, drawn from its workflow's stages, and its step documents (in the drawer or as a page).

A user who may not see a run gets a 404 for the run, its steps and its socket alike (services.access).
Each page is a constant number of queries whatever the number of steps
(tests/memos/pages/test_query_counts.py). What a finished run shows cannot change until a new claim of one of
its stages, which moves its ``lease`` and its status: its stages, and what its steps' documents are drawn
from, are made once per such state and kept in the shared cache (memos.cache), after the access check. A
document itself is rendered for each reader: it may show them a form of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST, require_safe
from pydantic import ValidationError

from memos.cache import cache_key, cached
from memos.models import AgentStep, Run
from memos.pipeline.breadth import Breadth
from memos.pipeline.cards import run_tokens, sealed_card
from memos.pipeline.fact_store import fact_store_version
from memos.pipeline.judge_families import badges
from memos.pipeline.registry import workflow_for
from memos.pipeline.steps import unfinished_parts
from memos.services.access import visible_runs
from memos.services.errors import ServiceError
from memos.services.refs import cited_ids, resolve
from memos.services.runs import may_retry, retry_run
from memos.services.surfaces import surface_of
from memos.views.kept_pages import kept_for_reader
from memos.views.users import user_of

# run.js asks for a step document with this header to get the bare fragment for its drawer.
FRAGMENT_HEADER = "X-Desk-Fragment"
UNFINISHED = "memos/step_documents/unfinished.html"
SEALED = "memos/step_documents/sealed.html"
BADGED = "memos/step_documents/badged.html"


@dataclass(frozen=True)
class StageBand:
    key: str
    label: str
    blurb: str
    steps: list[AgentStep]
    fan_outs: tuple[Breadth, ...] = ()  # its calls that run side by side, and why they may

    @property
    def done(self) -> int:
        finished = (AgentStep.Status.DONE, AgentStep.Status.SKIPPED)  # a step not needed is finished too
        return sum(1 for step in self.steps if step.status in finished)


def _pipeline_html(run: Run, sealed: frozenset[str] = frozenset()) -> str:
    """The run's stages and their cards; a card of a kind in ``sealed`` says its scores are hidden from this
    reader instead of its summary (a deck's judge, from a committee member who has not scored the deck)."""
    workflow = workflow_for(run.workflow)
    # Cards show no step's output: only a notice may read one (a deferred load, for the step it looks at).
    steps = list(run.steps.defer("output").order_by("position", "key"))
    steps = [sealed_card(step) if step.kind in sealed else step for step in steps]
    bands = [
        StageBand(
            stage.name, stage.label, stage.blurb, [s for s in steps if s.stage == stage.name], stage.fan_outs
        )
        for stage in workflow.stages
    ]
    context = {
        "run": run,
        "bands": bands,
        "notices": workflow.notices(steps),
        "verdict_badges": badges(run.verdict_families),
        "layered": workflow.layered,
    }
    return render_to_string("memos/fragments/pipeline.html", context)


@require_safe
@login_required
@kept_for_reader()
def run_page(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = get_object_or_404(
        visible_runs(user_of(request)).select_related("brief__company", "created_by"), pk=run_id
    )
    return _render_run(request, run)


@require_POST
@login_required
def retry(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """ "Retry what failed": a new run with the same configuration and pins, whose calls the first run had
    answered come from the ledger unpaid (memos.services.runs.retry_run). A refusal shows the page again
    with the reason (409) and starts nothing."""
    user = user_of(request)
    run = get_object_or_404(visible_runs(user).select_related("brief__company", "created_by"), pk=run_id)
    try:
        retried = retry_run(run=run, user=user)
    except ServiceError as exc:
        return _render_run(request, run, refusal=str(exc), status=409)
    return redirect("run", run_id=retried.pk)


def _sealed(user: User, step: AgentStep) -> str:
    """Why ``user`` may not read this step's evaluator scores yet ("" when they may)."""
    pages = surface_of(workflow_for(step.run.workflow)).steps
    if pages.sealed is None or step.kind not in workflow_for(step.run.workflow).sealed_kinds:
        return ""
    return pages.sealed(user, step.run)


def _render_run(request: HttpRequest, run: Run, *, refusal: str = "", status: int = 200) -> HttpResponse:
    user = user_of(request)
    pages = surface_of(workflow_for(run.workflow)).steps
    why_sealed = pages.sealed(user, run) if pages.sealed is not None else ""
    sealed = workflow_for(run.workflow).sealed_kinds if why_sealed else frozenset()
    if run.is_active:
        pipeline = _pipeline_html(run, sealed)
    else:
        key = cache_key("run-pipeline", run.pk, run.status, run.lease, run.finished_at, bool(sealed))
        pipeline = cached(key, lambda: _pipeline_html(run, sealed), type_=str)
    # Rendered by our own (autoescaping) template just above or before; nothing else reaches the cache key.
    workflow = workflow_for(run.workflow)
    context = {
        "run": run,
        "run_tokens": run_tokens(run),
        "workflow": workflow,
        "profile_line": workflow.describe(run.config),
        "pipeline": mark_safe(pipeline),  # noqa: S308
        "may_retry": may_retry(user, run),
        # The run's line names the judge's scores too: hidden with them.
        "status_sealed": why_sealed,
        "unfinished": unfinished_parts(run.pk) if not run.is_active else (),
        "refusal": refusal,
    }
    return render(request, "memos/run.html", context, status=status)


def step_context(step: AgentStep) -> tuple[str, dict[str, Any]]:
    """The template and context of a step's document, as its workflow declares its pages
    (memos.services.surfaces.StepPages); an unfinished or unreadable step shows as such."""
    run = step.run
    base: dict[str, Any] = {"step": step, "run": run}
    workflow = workflow_for(run.workflow)
    pages = surface_of(workflow).steps
    if step.status == AgentStep.Status.RUNNING and step.kind in pages.growing:
        cited, build = pages.growing[step.kind](step)
        evidence = pages.evidence(run)
        kind = workflow.kind(step.kind)
        return kind.page, base | {"kind": kind.name} | build(resolve(cited & evidence, evidence))
    if step.status != AgentStep.Status.DONE or step.kind not in workflow.kinds:
        return UNFINISHED, base
    kind = workflow.kind(step.kind)
    try:
        output = kind.output.model_validate(step.output)
    except ValidationError:
        return UNFINISHED, base | {"unreadable": True}
    # Only what the run was shown resolves: an id the model picked from elsewhere in the fact store is
    # shown as unresolved, never as a linked (and so seemingly vouched-for) figure.
    evidence = pages.evidence(run)
    refs = resolve(cited_ids(output) & evidence, evidence)
    return kind.page, base | {"kind": kind.name, "refs": refs} | pages.builder(step.kind)(output, step, refs)


def document_context(step: AgentStep) -> tuple[str, dict[str, Any]]:
    """``step_context``; a finished run's done step's is built once per state of the step and the run and
    version of the fact store (its citations resolve to facts read from the store). The step and the run
    themselves are always the rows just read."""
    run = step.run
    if step.status != AgentStep.Status.DONE or run.is_active:
        return step_context(step)
    key = cache_key("step-context", step.pk, step.finished_at, run.status, run.lease, fact_store_version())

    def build() -> tuple[str, dict[str, Any]]:
        template, context = step_context(step)
        return template, {name: value for name, value in context.items() if name not in ("step", "run")}

    template, context = cached(key, build, type_=tuple)
    return template, context | {"step": step, "run": run}


@require_safe
@login_required
@kept_for_reader(vary=(FRAGMENT_HEADER,))
def step_document(request: HttpRequest, run_id: UUID, step_id: int) -> HttpResponseBase:
    step = get_object_or_404(
        AgentStep.objects.select_related("run__brief__company").filter(
            run__in=visible_runs(user_of(request))
        ),
        pk=step_id,
        run_id=run_id,
    )
    template, context = document_context(step)
    sealed = _sealed(user_of(request), step)
    if sealed:
        template, context = SEALED, {"step": step, "run": step.run, "sealed": sealed}
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    # A verdict of the work's own model family says so above its document, in the drawer and on its page.
    context |= {"body": template, "verdict_badges": badges(step.run.verdict_families, role=step.role)}
    response = render(request, BADGED if fragment else "memos/step_page.html", context)
    patch_vary_headers(response, [FRAGMENT_HEADER])
    return response
