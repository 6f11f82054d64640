"""The home page: what the desk needs from the reader now, one part per role they hold.

- analyst: their runs (active first, then recent) and their schedules (deck cycles, weekly memos, the weekly
  screen when it is theirs); an admin sees every analyst's;
- committee member: the versions awaiting their vote, and the latest week's digest;
- reviewer: the motions at quorum, waiting for an approval or a request for changes, and approved versions
  waiting to be published; an admin sees them too;
- executive: what was published (anyone else sees it too when there is some).

Who may vote, and whether a quorum is met, are the review service's answers (memos.services.review), asked per
version: the page never counts votes itself. The fact store has its own page (memos.views.facts).

The analyst's part reads a constant number of rows whatever the number of companies and runs
(tests/memos/pages/test_query_counts.py); the committee's and the reviewer's read a few per open motion, of
which there are at most ``MOTIONS_SHOWN`` considered. A reader's page is kept drawn until anything is
committed, or the minute ends (memos.views.kept_pages).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from memos.models import ArtefactVersion, Company, Run
from memos.services.access import can_start_runs, roles_of, visible_runs, visible_versions
from memos.services.accounts import Roles
from memos.services.home_rows import Schedule
from memos.services.review import Tally, ballot, reviewers_for, tally
from memos.services.surfaces import surfaces
from memos.views.kept_pages import kept_for_reader

RUNS_SHOWN = 10  # of each: active, then finished
MOTIONS_SHOWN = 25  # open motions looked at for a member's vote or a reviewer's decision
PUBLISHED_SHOWN = 10
DIGEST_KIND = "week"  # the frozen digest of a week's work (the week workflow freezes it)

Status = ArtefactVersion.Status


@dataclass(frozen=True)
class Awaiting:
    version: ArtefactVersion
    tally: Tally


@dataclass(frozen=True)
class Decision:
    version: ArtefactVersion
    tally: Tally | None  # None for an approved version waiting to be published
    action: str


def _roles(user: User) -> frozenset[str]:
    return roles_of(user) if user.is_active else frozenset()


@require_safe
@kept_for_reader()
def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not isinstance(user, User):
        return render(request, "memos/landing.html")
    return render(request, "memos/home.html", home_context(user))


def home_context(user: User) -> dict[str, Any]:
    """What the signed-in reader's home page shows: each of their roles' part."""
    roles = _roles(user)
    admin = user.is_superuser and user.is_active
    analyst = admin or Roles.ANALYST in roles
    committee = Roles.COMMITTEE in roles and user.is_active
    reviewer = admin or Roles.REVIEWER in roles
    executive = Roles.EXECUTIVE in roles
    published = list(
        visible_versions(user, roles=roles)
        .filter(status=Status.PUBLISHED)
        .select_related("brief__company")
        .order_by("-published_at")[:PUBLISHED_SHOWN]
    )
    now = timezone.now()
    context: dict[str, Any] = {
        "admin": admin,
        "analyst": analyst,
        "committee": committee,
        "reviewer": reviewer,
        "executive": executive,
        "can_start_runs": can_start_runs(user, roles=roles),
        "actions": [
            action.template
            for surface in surfaces().values()
            for action in surface.home_actions
            if action.shown(user, frozenset(roles))
        ],
        "runs": analyst_runs(user, admin=admin, roles=roles) if analyst else None,
        "schedules": analyst_schedules(user, admin=admin, now=now) if analyst else None,
        "awaiting": awaiting_vote(user, roles=roles) if committee else None,
        "latest_digest": latest_digest(user, roles=roles) if committee else None,
        "decisions": decisions(user, admin=admin, roles=roles) if reviewer else None,
        # What the desk published, newest first: the executives' reading list (they see nothing else).
        "published": published,
        "refreshes": refresh_rows() if settings.DATA_MODE == "live" else None,
        "refresh_hours": settings.DATA_REFRESH_HOURS,
    }
    return context


def analyst_runs(user: User, *, admin: bool, roles: Collection[str] | None = None) -> list[Run]:
    """The runs of the analyst's briefs or started by them (every run for an admin), active first, newest
    first in each. Within what ``visible_runs`` shows: a committee member who is also an analyst sees their
    own here, not the whole desk's."""
    runs = visible_runs(user, roles=roles)
    if not admin:
        runs = runs.filter(Q(brief__owner=user) | Q(created_by=user))
    runs = runs.select_related("brief__company").order_by("-created_at")
    active = runs.filter(status__in=Run.ACTIVE_STATUSES)[:RUNS_SHOWN]
    finished = runs.exclude(status__in=Run.ACTIVE_STATUSES)[:RUNS_SHOWN]
    return list(chain(active, finished))


def analyst_schedules(user: User, *, admin: bool, now: datetime) -> list[Schedule]:
    """Every workflow's schedules the analyst keeps (every one for an admin), from its surface: the desk's
    week first, then the briefs' own."""
    found = [
        row
        for surface in surfaces().values()
        if surface.schedules is not None
        for row in surface.schedules(user, admin, now)
    ]
    return sorted(found, key=lambda row: not row.first)


def awaiting_vote(user: User, *, roles: Collection[str] | None = None) -> list[Awaiting]:
    """The versions with an open motion that ``user`` has not voted on and, by the review's own ballot, may
    vote on now; oldest motion first (the longest waiting)."""
    open_ones = (
        visible_versions(user, roles=roles)
        .filter(status=Status.READY_FOR_REVIEW, motion__closed_at__isnull=True)
        .exclude(votes__member=user)
        .select_related("brief__company", "run", "motion")
        .order_by("motion__opened_at", "pk")[:MOTIONS_SHOWN]
    )
    found = []
    for version in open_ones:
        shown = ballot(user, version)
        if shown.may_vote and shown.own_vote is None:
            found.append(Awaiting(version, shown.tally))
    return found


def latest_digest(user: User, *, roles: Collection[str] | None = None) -> ArtefactVersion | None:
    """The newest week's digest the reader may see."""
    return (
        visible_versions(user, roles=roles)
        .filter(kind=DIGEST_KIND)
        .select_related("brief__company")
        .order_by("-created_at", "-pk")
        .first()
    )


def decisions(user: User, *, admin: bool, roles: Collection[str] | None = None) -> list[Decision]:
    """What waits on a reviewer: open motions whose quorum is met (approve, or request changes) and approved
    versions (publish), each one the reader may act on (an admin sees them all; a reviewer never their own
    brief's: ``reviewers_for``)."""
    candidates = (
        visible_versions(user, roles=roles)
        .filter(
            Q(status=Status.READY_FOR_REVIEW, evaluated=True, motion__closed_at__isnull=True)
            | Q(status=Status.APPROVED)
        )
        .select_related("brief__company", "run", "motion")
        .order_by("created_at", "pk")[:MOTIONS_SHOWN]
    )
    found = []
    for version in candidates:
        if not admin and user not in reviewers_for(version):
            continue
        if version.status == Status.APPROVED:
            found.append(Decision(version, None, "approved: publish it, or request changes"))
            continue
        counted = tally(version, motion=version.motion)
        if counted.quorum_met:
            found.append(Decision(version, counted, "quorum met: approve, or request changes"))
    return found


def refresh_rows() -> list[Company]:
    """Live mode: each watched company (a brief is about it) with its last SEC refresh and what failed, in
    one query (memos.services.fact_refresh refreshes them daily)."""
    watched = Company.objects.filter(briefs__isnull=False).values("pk").distinct()
    return list(
        Company.objects.filter(pk__in=watched)
        .only("ticker", "name", "facts_refreshed_at", "refresh_failed_at", "refresh_error")
        .order_by("ticker")
    )
