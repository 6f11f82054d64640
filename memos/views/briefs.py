"""The brief form: an analyst asks a question about a company (or, for a screen, a watchlist) and a run
starts answering it."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memos.forms import BriefForm, profile_choices
from memos.models import DEFAULT_WORKFLOW, Run
from memos.pipeline.registry import WORKFLOWS, workflow_for
from memos.pipeline.workflows import ConfigurationError
from memos.services import spending
from memos.services.access import can_start_runs
from memos.services.errors import ServiceError
from memos.services.runs import ask, ask_watchlist
from memos.views.users import user_of


@login_required
@require_http_methods(["GET", "POST"])
def new_brief(request: HttpRequest) -> HttpResponse:
    user = user_of(request)
    if not can_start_runs(user):
        raise PermissionDenied("Only analysts start runs.")
    form = BriefForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = _start(user, data)
        except ServiceError as exc:
            error = str(exc)
        else:
            return redirect("run", run_id=run.pk)
    meanings = {choice.name: choice.meanings for choice in profile_choices()}
    profiles = [(choice, meanings.get(str(choice.data["value"]), [])) for choice in form["profile"]]
    context = {
        "form": form,
        "error": error,
        "profiles": profiles,
        "day": spending.today(user),
        "ceiling": f"{ceiling:,}" if (ceiling := settings.LLM_SETTINGS.run_budget_max_tokens) else None,
    }
    return render(request, "memos/brief_new.html", context)


def _start(user: User, data: dict[str, Any]) -> Run:
    """The run the form asks for: about a company, or (a screen) about a watchlist. A workflow with one
    profile (the screen's weekly) runs it whichever profile the form's shared list had selected."""
    workflow = data["workflow"] or DEFAULT_WORKFLOW
    offered = list(workflow_for(workflow).profiles()) if workflow in WORKFLOWS else []
    profile = offered[0] if len(offered) == 1 else data["profile"]
    if workflow in WORKFLOWS and workflow_for(workflow).subject == "watchlist":
        symbols = [s for s in re.split(r"[\s,;]+", data["watchlist"].upper()) if s]
        if not symbols:
            try:
                symbols = workflow_for(workflow).default_watchlist()
            except ConfigurationError as exc:
                raise ServiceError(str(exc)) from exc
        return ask_watchlist(
            owner=user,
            symbols=symbols,
            question=data["question"],
            audience=data["audience"],
            notes=data["notes"],
            profile=profile,
            workflow=workflow,
        )
    return ask(
        owner=user,
        ticker=data["ticker"],
        question=data["question"],
        audience=data["audience"],
        notes=data["notes"],
        profile=profile,
        workflow=workflow,
    )
