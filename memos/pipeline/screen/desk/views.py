"""The screen's own download URL: a version's standalone HTML report (one file, embedding nothing from
outside), served as stored (memos.views.downloads)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from memos.views.downloads import serve

REPORT = "report.html"


@require_safe
@login_required
def version_report(request: HttpRequest, version_id: int) -> HttpResponse:
    return serve(request, version_id, REPORT)
