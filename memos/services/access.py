"""Who may see what. A user who may not see an object gets a 404, never its content."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User
from django.db.models import Q, QuerySet

from memos.models import ArtefactVersion, Brief, Run
from memos.services.accounts import Roles

_READERS_OF_ALL_RUNS = (Roles.COMMITTEE, Roles.REVIEWER)


def roles_of(user: User) -> frozenset[str]:
    """The user's groups' names: one query. A page that asks several of the questions below reads them once
    and hands them to each (``roles``); read again for each question, they cost the home page three queries
    of its eleven."""
    return frozenset(user.groups.values_list("name", flat=True))


def visible_runs(
    user: AbstractBaseUser | AnonymousUser, *, roles: Collection[str] | None = None
) -> QuerySet[Run]:
    if not isinstance(user, User) or not user.is_active:
        return Run.objects.none()
    if user.is_superuser:
        return Run.objects.all()
    roles = roles_of(user) if roles is None else roles
    if set(roles).intersection(_READERS_OF_ALL_RUNS):
        return Run.objects.all()
    if Roles.ANALYST in roles:
        return Run.objects.filter(Q(brief__owner=user) | Q(created_by=user))
    # Executives read published versions, never runs; a user in no group reads nothing. The role, not the
    # ownership, opens a run: an analyst moved to another group no longer sees the runs they started.
    return Run.objects.none()


def visible_run_pairs(users: Iterable[AbstractBaseUser], run_ids: Collection[str]) -> set[tuple[int, UUID]]:
    """The (user id, run id) pairs among these users and runs that ``visible_runs(user)`` shows, in two
    queries (the users' groups, the runs' owners) however many users.

    The same rule as ``visible_runs``, for many users at once (the run-page sockets' batched re-check,
    memos.views.socket_access). Change the two together: test_socket_security compares them for every role,
    for owners, creators and others.
    """
    readers = {user.pk: user for user in users if isinstance(user, User) and user.is_active}
    if not readers or not run_ids:
        return set()
    roles: dict[int, set[str]] = defaultdict(set)
    for user_id, name in Group.objects.filter(user__in=list(readers)).values_list("user", "name"):
        roles[user_id].add(name)
    runs = Run.objects.filter(pk__in=run_ids).values_list("pk", "brief__owner", "created_by")
    visible = set()
    for run_id, owner_id, creator_id in runs:
        for user_id, user in readers.items():
            if (
                user.is_superuser
                or roles[user_id].intersection(_READERS_OF_ALL_RUNS)
                # The role, not the ownership, opens a run: an analyst moved to another group sees none.
                or (Roles.ANALYST in roles[user_id] and user_id in (owner_id, creator_id))
            ):
                visible.add((user_id, run_id))
    return visible


def can_view_run(user: AbstractBaseUser | AnonymousUser, run_id: UUID | str) -> bool:
    return visible_runs(user).filter(pk=run_id).exists()


def can_start_runs(user: AbstractBaseUser | AnonymousUser, *, roles: Collection[str] | None = None) -> bool:
    """Analysts write briefs and start runs; the committee, reviewers and executives only read them."""
    if not isinstance(user, User) or not user.is_active:
        return False
    if roles is not None:
        return user.is_superuser or Roles.ANALYST in roles
    return user.is_superuser or user.groups.filter(name=Roles.ANALYST).exists()


def visible_versions(
    user: AbstractBaseUser | AnonymousUser, *, roles: Collection[str] | None = None
) -> QuerySet[ArtefactVersion]:
    """The committee and reviewers read every version; an analyst those of their own briefs; an executive
    only versions that have been published (a later one superseding it leaves it readable, marked so)."""
    if not isinstance(user, User) or not user.is_active:
        return ArtefactVersion.objects.none()
    if user.is_superuser:
        return ArtefactVersion.objects.all()
    roles = roles_of(user) if roles is None else roles
    if set(roles).intersection(_READERS_OF_ALL_RUNS):
        return ArtefactVersion.objects.all()
    shown = Q(pk__in=[])
    if Roles.ANALYST in roles:
        shown |= Q(brief__owner=user) | Q(run__created_by=user)
    if Roles.EXECUTIVE in roles:
        shown |= Q(published_at__isnull=False)
    return ArtefactVersion.objects.filter(shown)


def may_set_schedule(user: AbstractBaseUser | AnonymousUser, brief: Brief) -> bool:
    """Who sets when a brief's work runs on its own (a deck's cycles, a weekly memo): the brief's analyst
    (while an analyst) or an admin; anyone else who may see the brief only reads it."""
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return user.pk == brief.owner_id and user.groups.filter(name=Roles.ANALYST).exists()
