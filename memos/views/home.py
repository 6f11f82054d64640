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
which there are at most ``MOTIONS_SHOWN`` considered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from agents.weekly import DAY_NAMES, ScheduleError, last_slot, parse_schedule
from memos.models import ArtefactVersion, Company, MemoSchedule, RefineSchedule, Run
from memos.pipeline.memo.desk.schedule import next_due as memo_next_due
from memos.pipeline.screen.desk.schedule import QUESTION as WEEKLY_SCREEN_QUESTION
from memos.pipeline.screen.plan import NAME as SCREEN
from memos.pipeline.screen.settings import screen_settings
from memos.pipeline.week.desk.schedule import week_slot
from memos.pipeline.week.desk.start import may_start_week
from memos.pipeline.week.settings import week_settings
from memos.services.access import can_start_runs, visible_runs, visible_versions
from memos.services.accounts import Roles
from memos.services.review import Tally, ballot, reviewers_for, tally

RUNS_SHOWN = 10  # of each: active, then finished
MOTIONS_SHOWN = 25  # open motions looked at for a member's vote or a reviewer's decision
PUBLISHED_SHOWN = 10
DIGEST_KIND = "week"  # the frozen digest of a week's work (the week workflow freezes it)

Status = ArtefactVersion.Status


@dataclass(frozen=True)
class Schedule:
    """One of the analyst's schedules as the home page lists it."""

    what: str  # "deck refinement", "weekly memo", "weekly screen"
    brief_subject: str
    question: str
    cadence: str
    next_due: datetime | None
    last_outcome: str
    last_outcome_at: datetime | None
    last_run_id: object  # a run id the reader may open, or None
    version_id: int | None  # where the schedule is set: its brief's newest version


@dataclass(frozen=True)
class Awaiting:
    version: ArtefactVersion
    tally: Tally


@dataclass(frozen=True)
class Decision:
    version: ArtefactVersion
    tally: Tally | None  # None for an approved version waiting to be published
    action: str


def _roles(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True)) if user.is_active else set()


@require_safe
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
        visible_versions(user)
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
        "can_start_runs": can_start_runs(user),
        "may_run_week": may_start_week(user),
        "runs": analyst_runs(user, admin=admin) if analyst else None,
        "schedules": analyst_schedules(user, admin=admin, now=now) if analyst else None,
        "awaiting": awaiting_vote(user) if committee else None,
        "latest_digest": latest_digest(user) if committee else None,
        "decisions": decisions(user, admin=admin) if reviewer else None,
        # What the desk published, newest first: the executives' reading list (they see nothing else).
        "published": published,
        "refreshes": refresh_rows() if settings.DATA_MODE == "live" else None,
        "refresh_hours": settings.DATA_REFRESH_HOURS,
    }
    return context


def analyst_runs(user: User, *, admin: bool) -> list[Run]:
    """The runs of the analyst's briefs or started by them (every run for an admin), active first, newest
    first in each. Within what ``visible_runs`` shows: a committee member who is also an analyst sees their
    own here, not the whole desk's."""
    runs = visible_runs(user)
    if not admin:
        runs = runs.filter(Q(brief__owner=user) | Q(created_by=user))
    runs = runs.select_related("brief__company").order_by("-created_at")
    active = runs.filter(status__in=Run.ACTIVE_STATUSES)[:RUNS_SHOWN]
    finished = runs.exclude(status__in=Run.ACTIVE_STATUSES)[:RUNS_SHOWN]
    return list(chain(active, finished))


def analyst_schedules(user: User, *, admin: bool, now: datetime) -> list[Schedule]:
    """The deck cycles and weekly memos of the analyst's briefs (every brief's for an admin), and the weekly
    screen when the analyst is its owner (``SCREEN_SCHEDULE_OWNER``) or an admin."""
    mine = Q() if admin else Q(brief__owner=user)
    cycles = list(RefineSchedule.objects.filter(mine).select_related("brief__company"))
    weeklies = list(MemoSchedule.objects.filter(mine).select_related("brief__company"))
    both: list[RefineSchedule | MemoSchedule] = [*cycles, *weeklies]
    # A last run is linked only where the reader may open it (a brief handed to them by an admin).
    last_runs = {s.last_run_id for s in both if s.last_run_id is not None}
    openable = set(visible_runs(user).filter(pk__in=last_runs).values_list("pk", flat=True))
    newest = _newest_versions({s.brief_id for s in both})
    found = [
        Schedule(
            what="deck refinement",
            brief_subject=cycle.brief.subject,
            question=cycle.brief.question,
            cadence=_held(cycle.cadence, cycle.held_off_by_admin),
            next_due=cycle.next_due(now),
            last_outcome=cycle.last_outcome,
            last_outcome_at=cycle.last_outcome_at,
            last_run_id=cycle.last_run_id if cycle.last_run_id in openable else None,
            version_id=newest.get((cycle.brief_id, "deck")),
        )
        for cycle in cycles
    ]
    found += [
        Schedule(
            what="weekly memo",
            brief_subject=weekly.brief.subject,
            question=weekly.brief.question,
            cadence=_held(_weekly_cadence(weekly) if weekly.enabled else "off", weekly.held_off_by_admin),
            next_due=memo_next_due(weekly, now),
            last_outcome=weekly.last_outcome,
            last_outcome_at=weekly.last_outcome_at,
            last_run_id=weekly.last_run_id if weekly.last_run_id in openable else None,
            version_id=newest.get((weekly.brief_id, "memo")),
        )
        for weekly in weeklies
    ]
    screen = weekly_screen(user, admin=admin, now=now)
    if screen is not None:
        found.append(screen)
    week = desk_week(user, admin=admin, now=now)
    if week is not None:
        found.insert(0, week)
    return found


def desk_week(user: User, *, admin: bool, now: datetime) -> Schedule | None:
    """The desk's week (``DESK_WEEK_SCHEDULE``) for its owner and the admins; None for anyone else."""
    owner = week_settings().owner
    if not admin and user.username != owner:
        return None
    slot = week_slot(now)
    openable = slot.last_run_id is not None and visible_runs(user).filter(pk=slot.last_run_id).exists()
    return Schedule(
        what="the desk's week",
        brief_subject="the desk's watchlist",
        question=f"screen, closer looks, decks, digest, as {owner}'s (DESK_WEEK_OWNER)",
        cadence=slot.cadence,
        next_due=slot.next_due,
        last_outcome=slot.last_outcome,
        last_outcome_at=slot.last_outcome_at,
        last_run_id=slot.last_run_id if openable else None,
        version_id=None,
    )


def _newest_versions(briefs: set[int]) -> dict[tuple[int, str], int]:
    """Each brief's newest version of each kind: the page where its schedule is set."""
    found: dict[tuple[int, str], int] = {}
    rows = ArtefactVersion.objects.filter(brief_id__in=briefs).order_by("number")
    for brief_id, kind, pk in rows.values_list("brief_id", "kind", "pk"):
        found[(brief_id, kind)] = pk  # ordered by number: the newest wins
    return found


def _held(cadence: str, by_admin: bool) -> str:
    return f"{cadence} (an admin holds it off)" if by_admin else cadence


def _weekly_cadence(schedule: MemoSchedule) -> str:
    return f"every {DAY_NAMES[schedule.weekday]} at {schedule.at:%H:%M} UTC"


def weekly_screen(user: User, *, admin: bool, now: datetime) -> Schedule | None:
    """The weekly screen (``SCREEN_SCHEDULE``) for its owner and the admins; None for anyone else."""
    owner = screen_settings().schedule_owner
    if not admin and user.username != owner:
        return None
    try:
        planned = parse_schedule(screen_settings().schedule)
    except ScheduleError as exc:
        planned, cadence = None, f"not running: {exc}"
    else:
        cadence = "off (SCREEN_SCHEDULE)" if planned is None else ""
    if planned is not None:
        cadence = f"every {DAY_NAMES[planned[0]]} at {planned[1]:%H:%M} UTC"
    last = (
        visible_runs(user)
        .filter(workflow=SCREEN, brief__owner__username=owner, brief__question=WEEKLY_SCREEN_QUESTION)
        .order_by("-created_at")
        .first()
    )
    return Schedule(
        what="weekly screen",
        brief_subject="the strategy's watchlist",
        question=f"as {owner}'s brief (SCREEN_SCHEDULE_OWNER)",
        cadence=cadence,
        next_due=last_slot(now, *planned) + timedelta(days=7) if planned is not None else None,
        last_outcome=f"started run {str(last.pk)[:8]} · {last.get_status_display().lower()}" if last else "",
        last_outcome_at=last.created_at if last else None,
        last_run_id=last.pk if last else None,
        version_id=None,
    )


def awaiting_vote(user: User) -> list[Awaiting]:
    """The versions with an open motion that ``user`` has not voted on and, by the review's own ballot, may
    vote on now; oldest motion first (the longest waiting)."""
    open_ones = (
        visible_versions(user)
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


def latest_digest(user: User) -> ArtefactVersion | None:
    """The newest week's digest the reader may see."""
    return (
        visible_versions(user)
        .filter(kind=DIGEST_KIND)
        .select_related("brief__company")
        .order_by("-created_at", "-pk")
        .first()
    )


def decisions(user: User, *, admin: bool) -> list[Decision]:
    """What waits on a reviewer: open motions whose quorum is met (approve, or request changes) and approved
    versions (publish), each one the reader may act on (an admin sees them all; a reviewer never their own
    brief's: ``reviewers_for``)."""
    candidates = (
        visible_versions(user)
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
