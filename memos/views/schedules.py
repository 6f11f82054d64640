"""What every workflow's schedule forms share (a deck's refinement cycles, a memo's weekly position): who
may set a brief's schedule, the version a refusal is shown on, and where a form may send the reader back.

Who may see the brief (one of its versions) sees the schedule; its analyst and admins set it. A user who may
not see the brief gets a 404, one who may only read it a 403; a refused change shows the brief's latest
version again with the reason (409) and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme

from memos.models import ArtefactVersion, Brief
from memos.services.access import may_set_schedule, visible_versions
from memos.services.errors import ServiceError
from memos.views.users import user_of
from memos.views.versions import refused


def local_path(url: str) -> str | None:
    """``url`` when it is a path on this site (never another host, a scheme or a protocol-relative URL)."""
    if url.startswith("/") and url_has_allowed_host_and_scheme(url, allowed_hosts=None):
        return url
    return None


def latest_readable(user: User, brief_id: int, *, kind: str = "deck") -> ArtefactVersion:
    """The head of the brief's ``kind`` line the user may read (the page a refusal is shown on), or else the
    newest version of the brief they may read."""
    readable = (
        visible_versions(user).filter(brief_id=brief_id).select_related("brief__owner", "brief__company")
    )
    version: ArtefactVersion | None = (
        readable.filter(kind=kind).order_by("-number").first()
        or readable.order_by("-created_at", "-pk").first()
    )
    if version is None:
        raise Http404("No such brief.")
    return version


def settable(request: HttpRequest, brief_id: int, kind: str, what: str) -> tuple[User, ArtefactVersion]:
    """The signed-in user and the version a refusal is shown on, when the user may set the brief's schedules
    (its analyst or an admin); 404 for a brief they may not see, 403 for one they may only read."""
    user = user_of(request)
    version = latest_readable(user, brief_id, kind=kind)
    if not may_set_schedule(user, version.brief):
        raise PermissionDenied(f"Only the brief's analyst or an admin {what}.")
    return user, version


def reasons(form: forms.Form) -> str:
    return "; ".join(f"{name}: {' '.join(map(str, errors))}" for name, errors in form.errors.items())


def set_from_form(
    request: HttpRequest,
    brief_id: int,
    *,
    kind: str,
    who: str,
    form: type[forms.Form],
    what: str,
    apply: Callable[[User, Brief, dict[str, Any]], object],
) -> HttpResponse:
    """A schedule form's POST: who may set it (``settable``), the form read, ``apply`` (a service that
    refuses with ServiceError), then back to the page it came from, or to the version; a refusal shows the
    version again with the reason and changes nothing."""
    user, version = settable(request, brief_id, kind, who)
    filled = form(request.POST)
    if not filled.is_valid():
        return refused(request, version, f"{what} was not changed ({reasons(filled)}).")
    try:
        apply(user, version.brief, filled.cleaned_data)
    except ServiceError as exc:
        return refused(request, version, str(exc))
    back = local_path(request.POST.get("next", ""))
    return redirect(back) if back else redirect("version", version_id=version.pk)
