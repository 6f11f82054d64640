"""Who may see what. A user who may not see an object gets a 404, never its content."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db.models import Q, QuerySet

from memos.models import Run
from memos.services.accounts import Roles

_READERS_OF_ALL_RUNS = (Roles.COMMITTEE, Roles.REVIEWER)


def visible_runs(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Run]:
    if not isinstance(user, User) or not user.is_active:
        return Run.objects.none()
    if user.is_superuser:
        return Run.objects.all()
    roles = set(user.groups.values_list("name", flat=True))
    if roles.intersection(_READERS_OF_ALL_RUNS):
        return Run.objects.all()
    if Roles.ANALYST in roles:
        return Run.objects.filter(Q(brief__owner=user) | Q(created_by=user))
    # Executives read published versions, never runs; a user in no group reads nothing. The role, not the
    # ownership, opens a run: an analyst moved to another group no longer sees the runs they started.
    return Run.objects.none()


def can_view_run(user: AbstractBaseUser | AnonymousUser, run_id: UUID | str) -> bool:
    return visible_runs(user).filter(pk=run_id).exists()


def can_start_runs(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Analysts write briefs and start runs; the committee, reviewers and executives only read them."""
    if not isinstance(user, User) or not user.is_active:
        return False
    return user.is_superuser or user.groups.filter(name=Roles.ANALYST).exists()
