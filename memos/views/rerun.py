"""Re-running a finished memo run's evaluation alone, from its page (memos.services.rerun).

A user who may not see the run gets a 404; one who may see it but is not its analyst a 403; a run that is
not waiting with a memo delivered not evaluated a 409 saying why. Nothing of the run is shown on a refusal.
"""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from memos.services.access import visible_runs
from memos.services.errors import ServiceError
from memos.services.rerun import may_rerun, rerun_evaluation
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
