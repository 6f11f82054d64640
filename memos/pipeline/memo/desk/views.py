"""The memo's own actions: re-running a finished run's evaluation alone, from its page
(memos.pipeline.memo.desk.rerun), and setting a brief's weekly memo (memos.pipeline.memo.desk.schedule).

A user who may not see the run gets a 404; one who may see it but is not its analyst a 403; a run that is
not waiting with a memo delivered not evaluated a 409 saying why. Nothing of the run is shown on a refusal.
"""

from __future__ import annotations

from uuid import UUID

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from memos.models.schedules import MEMO_DEFAULT_TIME
from memos.pipeline.memo.desk.rerun import may_rerun, rerun_evaluation
from memos.pipeline.memo.desk.schedule import set_memo_schedule
from memos.services.access import visible_runs
from memos.services.errors import ServiceError
from memos.views.schedules import set_from_form
from memos.views.users import user_of

REFUSED = "memos/step_documents/memo/rerun_refused.html"


@require_POST
@login_required
def rerun_evaluation_view(request: HttpRequest, run_id: UUID) -> HttpResponse:
    user = user_of(request)
    run = get_object_or_404(visible_runs(user).select_related("brief"), pk=run_id)
    if not may_rerun(user, run):
        raise PermissionDenied("Only the run's analyst may re-run its evaluation.")
    try:
        rerun_evaluation(run=run, user=user)
    except ServiceError as exc:
        return render(request, REFUSED, {"reason": str(exc), "run_id": run.pk}, status=409)
    return redirect("run", run_id=run.pk)


class MemoScheduleForm(forms.Form):
    enabled = forms.TypedChoiceField(choices=[("on", "weekly"), ("off", "off")], coerce=lambda v: v == "on")
    weekday = forms.TypedChoiceField(choices=[(str(n), n) for n in range(7)], coerce=int, required=False)
    at = forms.TimeField(required=False)


@require_POST
@login_required
def set_brief_memo_schedule(request: HttpRequest, brief_id: int) -> HttpResponse:
    """A memo brief's weekly position: on a day and time (UTC), or off; its analyst or an admin."""
    return set_from_form(
        request,
        brief_id,
        kind="memo",
        who="sets its weekly memo",
        form=MemoScheduleForm,
        what="The weekly memo",
        apply=lambda user, brief, data: set_memo_schedule(
            brief=brief,
            user=user,
            enabled=data["enabled"],
            weekday=data["weekday"] if data["weekday"] is not None else 0,
            at=data["at"] or MEMO_DEFAULT_TIME,
        ),
    )
