"""The review's actions on a version, each a POST from its page: vote, recuse, approve, request changes,
publish. The rules live in memos.services.review; a refusal shows the page again with the reason (409) and
changes nothing but the audit row a refused approval leaves."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from memos.models import Vote
from memos.services import review
from memos.services.review import ReviewRefused
from memos.views.users import user_of
from memos.views.versions import refused, version_for


@require_POST
@login_required
def vote(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    choice = request.POST.get("choice", "")
    if choice == Vote.Choice.RECUSED:
        return refused(request, version, "to recuse, declare the conflict with the recusal form")
    try:
        review.cast_vote(user, version, choice, request.POST.get("rationale", ""))
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)


@require_POST
@login_required
def recuse(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    try:
        review.cast_vote(user, version, Vote.Choice.RECUSED, request.POST.get("conflict", ""))
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)


@require_POST
@login_required
def approve(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    try:
        review.approve(user, version)
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)


@require_POST
@login_required
def request_changes(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    try:
        review.request_changes(user, version, request.POST.get("comment", ""))
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)


@require_POST
@login_required
def publish(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    try:
        review.publish(user, version)
    except ReviewRefused as exc:
        return refused(request, version, str(exc))
    return redirect("version", version_id=version.pk)
