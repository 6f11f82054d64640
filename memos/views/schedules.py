"""Setting a deck brief's refinement schedule, and starting a cycle now: the POSTs of the forms in
templates/memos/decks/_schedule.html (its panel comes from memos.services.schedules.schedule_panel).

Who may see the brief (one of its versions) sees the schedule; its analyst and admins set it. A user who may
not see the brief gets a 404, one who may only read it a 403; a refused change shows the brief's latest
version again with the reason (409) and changes nothing.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from memos.models import ArtefactVersion
from memos.models.schedules import FIRST_SLOT, MEMO_DEFAULT_TIME, SECOND_SLOT
from memos.services.access import may_set_schedule, visible_versions
from memos.services.deck_cycles import start_cycle
from memos.services.errors import ServiceError
from memos.services.memo_schedule import set_memo_schedule
from memos.services.schedules import CADENCES, set_schedule
from memos.views.users import user_of
from memos.views.versions import refused


class ScheduleForm(forms.Form):
    cycles = forms.TypedChoiceField(choices=[(str(n), label) for n, label in CADENCES], coerce=int)
    first_slot = forms.TimeField(required=False)
    second_slot = forms.TimeField(required=False)


def local_path(url: str) -> str | None:
    """``url`` when it is a path on this site (never another host, a scheme or a protocol-relative URL)."""
    if url.startswith("/") and url_has_allowed_host_and_scheme(url, allowed_hosts=None):
        return url
    return None


def _latest_readable(user: User, brief_id: int, *, kind: str = "deck") -> ArtefactVersion:
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


def _settable(request: HttpRequest, brief_id: int, kind: str, what: str) -> tuple[User, ArtefactVersion]:
    """The signed-in user and the version a refusal is shown on, when the user may set the brief's schedules
    (its analyst or an admin); 404 for a brief they may not see, 403 for one they may only read."""
    user = user_of(request)
    version = _latest_readable(user, brief_id, kind=kind)
    if not may_set_schedule(user, version.brief):
        raise PermissionDenied(f"Only the brief's analyst or an admin {what}.")
    return user, version


def _reasons(form: forms.Form) -> str:
    return "; ".join(f"{name}: {' '.join(map(str, errors))}" for name, errors in form.errors.items())


@require_POST
@login_required
def set_brief_schedule(request: HttpRequest, brief_id: int) -> HttpResponse:
    user, version = _settable(request, brief_id, "deck", "sets when its deck is refined")
    brief = version.brief
    form = ScheduleForm(request.POST)
    if not form.is_valid():
        return refused(request, version, f"The schedule was not changed ({_reasons(form)}).")
    data = form.cleaned_data
    try:
        set_schedule(
            brief=brief,
            user=user,
            cycles_per_day=data["cycles"],
            first_slot=data["first_slot"] or FIRST_SLOT,
            second_slot=data["second_slot"] or SECOND_SLOT,
        )
    except ServiceError as exc:
        return refused(request, version, str(exc))
    back = local_path(request.POST.get("next", ""))
    return redirect(back) if back else redirect("version", version_id=version.pk)


@require_POST
@login_required
def refine_now(request: HttpRequest, brief_id: int) -> HttpResponse:
    """Start a refinement cycle of the brief's deck now: its analyst or an admin, within the day's two."""
    _user, version = _settable(request, brief_id, "deck", "starts a refinement cycle")
    try:
        run = start_cycle(brief=version.brief)
    except ServiceError as exc:
        return refused(request, version, f"No cycle was started: {exc}")
    return redirect("run", run_id=run.pk)


class MemoScheduleForm(forms.Form):
    enabled = forms.TypedChoiceField(choices=[("on", "weekly"), ("off", "off")], coerce=lambda v: v == "on")
    weekday = forms.TypedChoiceField(choices=[(str(n), n) for n in range(7)], coerce=int, required=False)
    at = forms.TimeField(required=False)


@require_POST
@login_required
def set_brief_memo_schedule(request: HttpRequest, brief_id: int) -> HttpResponse:
    """A memo brief's weekly position: on a day and time (UTC), or off; its analyst or an admin."""
    user, version = _settable(request, brief_id, "memo", "sets its weekly memo")
    brief = version.brief
    form = MemoScheduleForm(request.POST)
    if not form.is_valid():
        return refused(request, version, f"The weekly memo was not changed ({_reasons(form)}).")
    data = form.cleaned_data
    try:
        set_memo_schedule(
            brief=brief,
            user=user,
            enabled=data["enabled"],
            weekday=data["weekday"] if data["weekday"] is not None else 0,
            at=data["at"] or MEMO_DEFAULT_TIME,
        )
    except ServiceError as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)
