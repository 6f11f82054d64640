"""Pages for briefs, runs, their documents and the evidence they cite.

A user who may not see a run gets a 404 for the run, its steps and its socket alike (services.access).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_http_methods

from memos.forms import BriefForm
from memos.models import AgentStep, Brief, FactRecord, Run, SourceDocument
from memos.services.access import can_start_runs, visible_runs
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from memos.step_documents import document_context, refs_for

# run.js asks for a document with this header to get the bare fragment for its drawer.
FRAGMENT_HEADER = "X-Desk-Fragment"

LAYERS: tuple[tuple[str, str, str], ...] = (
    ("data", "Data", "Evidence gathered by code: filed figures, prices and documents"),
    ("specialists", "Specialists", "Each reads only its own evidence and must cite it"),
    ("synthesis", "Synthesis", "A fact-stability audit, then iterations under the hill-climb rule"),
    ("evaluation", "Evaluation", "A separate model grades every iteration"),
    ("memo", "Memo", "Code applies the LOW-tier firewall and renders every figure"),
)


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # login_required ran first
    return request.user


# --- briefs


def _identical_brief(owner: User, form: BriefForm) -> Brief | None:
    """The owner's brief with exactly these fields, if any: a double-submitted form then meets the
    one-active-run rule instead of starting a second, identical run."""
    data = form.cleaned_data
    return (
        Brief.objects.filter(
            owner=owner,
            company__ticker=data["ticker"].strip().upper(),
            question=data["question"].strip(),
            audience=data["audience"].strip() or "Investment committee",
            notes=data["notes"].strip(),
        )
        .order_by("-created_at")
        .first()
    )


def _create_and_start(owner: User, form: BriefForm) -> Run:
    data = form.cleaned_data
    # One transaction: a refused run leaves no orphan brief, and the first stage is queued on commit.
    with transaction.atomic():
        brief = _identical_brief(owner, form) or create_brief(
            owner=owner,
            ticker=data["ticker"],
            question=data["question"],
            audience=data["audience"],
            notes=data["notes"],
        )
        return start_run(brief, user=owner, profile=data["profile"])


@login_required
@require_http_methods(["GET", "POST"])
def new_brief(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if not can_start_runs(user):
        raise PermissionDenied("Only analysts start runs.")
    form = BriefForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            run = _create_and_start(user, form)
        except ServiceError as exc:
            error = str(exc)
        else:
            return redirect("run", run_id=run.pk)
    return render(request, "memos/brief_new.html", {"form": form, "error": error})


# --- runs


@dataclass(frozen=True)
class LayerBand:
    key: str
    label: str
    blurb: str
    steps: list[AgentStep]

    @property
    def done(self) -> int:
        return sum(1 for step in self.steps if step.status == AgentStep.Status.DONE)


def _bands(run: Run) -> list[LayerBand]:
    steps = list(run.steps.order_by("position", "key"))
    return [
        LayerBand(key, label, blurb, [s for s in steps if s.layer == key]) for key, label, blurb in LAYERS
    ]


def _same_model_warning(bands: list[LayerBand]) -> str:
    for band in bands:
        for step in band.steps:
            if step.key == "evaluation" and isinstance(step.output, dict):
                return str(step.output.get("same_model_warning") or "")
    return ""


@login_required
def run_page(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = get_object_or_404(
        visible_runs(_user(request)).select_related("brief__company", "created_by"), pk=run_id
    )
    bands = _bands(run)
    context = {"run": run, "bands": bands, "same_model_warning": _same_model_warning(bands)}
    return render(request, "memos/run.html", context)


@login_required
def step_document(request: HttpRequest, run_id: UUID, step_id: int) -> HttpResponseBase:
    step = get_object_or_404(
        AgentStep.objects.select_related("run__brief__company").filter(run__in=visible_runs(_user(request))),
        pk=step_id,
        run_id=run_id,
    )
    context = document_context(step, refs_for(step.run, [step.output]))
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    template = f"memos/documents/{context['kind']}.html" if fragment else "memos/step_page.html"
    response = render(request, template, context)
    patch_vary_headers(response, [FRAGMENT_HEADER])
    return response


# --- evidence


@login_required
def fact_detail(request: HttpRequest, fact_id: str) -> HttpResponse:
    fact = get_object_or_404(FactRecord.objects.select_related("company"), fact_id=fact_id)
    inputs = [str(i) for i in fact.inputs] if isinstance(fact.inputs, list) else []
    known_inputs = set(FactRecord.objects.filter(fact_id__in=inputs).values_list("fact_id", flat=True))
    context = {
        "fact": fact,
        "inputs": [(fact_input, fact_input in known_inputs) for fact_input in inputs],
        "safe_url": fact.url if fact.url.startswith(("https://", "http://")) else "",
    }
    return render(request, "memos/fact.html", context)


@login_required
def document_detail(request: HttpRequest, doc_id: str) -> HttpResponse:
    document = get_object_or_404(SourceDocument, doc_id=doc_id)
    # The URL came from a feed: link out only to the web, never to javascript: or data: URLs.
    safe_url = document.url if document.url.startswith(("https://", "http://")) else ""
    return render(request, "memos/document.html", {"document": document, "safe_url": safe_url})
