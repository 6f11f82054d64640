"""The brief form: an analyst asks a question about a company and a run starts answering it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memos.forms import BriefForm, profile_choices
from memos.models import Run
from memos.services.access import can_start_runs
from memos.services.errors import ServiceError
from memos.services.runs import ask
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
            run = ask(
                owner=user,
                ticker=data["ticker"],
                question=data["question"],
                audience=data["audience"],
                notes=data["notes"],
                profile=data["profile"],
                workflow=data["workflow"] or Run.Workflow.MEMO,
            )
        except ServiceError as exc:
            error = str(exc)
        else:
            return redirect("run", run_id=run.pk)
    meanings = {choice.name: choice.meanings for choice in profile_choices()}
    profiles = [(choice, meanings.get(str(choice.data["value"]), [])) for choice in form["profile"]]
    return render(request, "memos/brief_new.html", {"form": form, "error": error, "profiles": profiles})
