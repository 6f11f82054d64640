"""An administrator adopts a deck run's brief-specific rubric anchors from the step that proposed them."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from memos.models import AgentStep
from memos.pipeline.deck.desk.rubric_proposals import adopt_proposal
from memos.services.access import visible_runs
from memos.services.errors import ServiceError
from memos.views.users import user_of

REFUSED = "memos/step_documents/deck/adopt_refused.html"


@require_POST
@login_required
def adopt_rubric_view(request: HttpRequest, run_id: UUID, step_id: int) -> HttpResponse:
    user = user_of(request)
    step = get_object_or_404(AgentStep.objects.filter(run__in=visible_runs(user)), pk=step_id, run_id=run_id)
    if not user.is_superuser:
        raise PermissionDenied("Only an administrator may adopt rubric anchors.")
    try:
        adopt_proposal(step=step, user=user)
    except ServiceError as exc:
        return render(request, REFUSED, {"reason": str(exc), "run_id": run_id}, status=409)
    return redirect("admin:memos_rubricversion_changelist")
