"""The week's own action: "Run this week now", for an analyst or an admin (the home page's button). A refusal
(a week already running, no owner) shows the home page again with the reason, and starts nothing."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memos.pipeline.week.desk.start import may_start_week, start_week
from memos.services.errors import ServiceError
from memos.views.users import user_of


@require_POST
@login_required
def run_week_now(request: HttpRequest) -> HttpResponse:
    # The home page's view: imported when asked, as the surface's URLs are.
    from memos.views.home import home_context

    user = user_of(request)
    if not may_start_week(user):
        return HttpResponseForbidden("Only an analyst or an admin starts the desk's week.")
    try:
        run = start_week()
    except ServiceError as exc:
        context = home_context(user) | {"refusal": f"The week did not start: {exc}"}
        return render(request, "memos/home.html", context, status=409)
    return redirect("run", run_id=run.pk)
