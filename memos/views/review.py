"""The review's actions on a version, each a POST from its page: vote, recuse, approve, request changes,
publish (a workflow's own actions use ``act`` too: a deck's scores). The rules live in
memos.services.review; a refusal shows the page again with the reason (409) and changes nothing but the audit
row a refused approval leaves."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from memos.models import ArtefactVersion, Vote
from memos.services import review
from memos.services.access import visible_versions
from memos.services.review import ReviewRefused
from memos.views.users import user_of
from memos.views.versions import refused, version_for

Action = Callable[[User, ArtefactVersion, HttpRequest], object]


def act(request: HttpRequest, version_id: int, action: Action) -> HttpResponse:
    """Run ``action`` as the signed-in user on a version they may see (else 404); back to its page, or the
    page again with the reason when the rules refuse."""
    user = user_of(request)
    version = version_for(user, version_id)
    try:
        action(user, version, request)
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=_back_to(user, request) or version.pk)


def _back_to(user: User, request: HttpRequest) -> int | None:
    """The page a form asked to come back to (the week's digest, where a member votes on each version it
    links): another version's page, only one the user may see."""
    raw = request.POST.get("back_to", "")
    if not raw.isdigit():
        return None
    return visible_versions(user).filter(pk=int(raw)).values_list("pk", flat=True).first()


def _vote(user: User, version: ArtefactVersion, request: HttpRequest) -> object:
    choice = request.POST.get("choice", "")
    if choice == Vote.Choice.RECUSED:
        raise ReviewRefused("to recuse, declare the conflict with the recusal form")
    return review.cast_vote(
        version=version, member=user, choice=choice, rationale=request.POST.get("rationale", "")
    )


@require_POST
@login_required
def vote(request: HttpRequest, version_id: int) -> HttpResponse:
    return act(request, version_id, _vote)


@require_POST
@login_required
def recuse(request: HttpRequest, version_id: int) -> HttpResponse:
    return act(
        request,
        version_id,
        lambda user, version, r: review.cast_vote(
            version=version, member=user, choice=Vote.Choice.RECUSED, rationale=r.POST.get("conflict", "")
        ),
    )


@require_POST
@login_required
def approve(request: HttpRequest, version_id: int) -> HttpResponse:
    return act(request, version_id, lambda user, version, _: review.approve(version=version, reviewer=user))


@require_POST
@login_required
def request_changes(request: HttpRequest, version_id: int) -> HttpResponse:
    return act(
        request,
        version_id,
        lambda user, version, r: review.request_changes(
            version=version, reviewer=user, comment=r.POST.get("comment", "")
        ),
    )


@require_POST
@login_required
def publish(request: HttpRequest, version_id: int) -> HttpResponse:
    return act(request, version_id, lambda user, version, _: review.publish(version=version, reviewer=user))


@require_POST
@login_required
def accept_partial(request: HttpRequest, version_id: int) -> HttpResponse:
    """The brief's analyst accepts a partial version as it is: the committee's vote opens on it."""
    return act(
        request, version_id, lambda user, version, _: review.accept_partial(version=version, analyst=user)
    )
