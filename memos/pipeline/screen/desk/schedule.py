"""The weekly screen on a schedule (seed 002: "weekly positions" of a watchlist): at ``SCREEN_SCHEDULE``
("fri 21:30", UTC: after Friday's US close; "off" to stop it), the scheduler's tick starts a screen of
``SCREEN_STRATEGY``'s watchlist as a brief of ``SCREEN_SCHEDULE_OWNER``'s (memos.services.scheduler).

The slot is acted on once: a screen of the scheduled brief created since the slot means it is done, and the
one-active-run-per-brief constraint keeps two ticks at once from starting two. A slot more than
``CATCH_UP`` old is let go (a desk started on Monday does not screen last Friday's week unasked); the next
one runs as planned. It screens the latest week the desk's data holds (memos.pipeline.screen.weeks), never the
strategy file's example week: in snapshot mode that is the last bundled week, so a repeat costs no LLM call.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User

from agents.weekly import DAY_NAMES, ScheduleError, last_slot, parse_schedule
from memos.models import Run
from memos.pipeline.screen.plan import NAME as SCREEN
from memos.pipeline.screen.profiles import WEEKLY
from memos.pipeline.screen.settings import screen_settings
from memos.pipeline.screen.universe import default_symbols
from memos.pipeline.screen.weeks import this_weeks_strategy
from memos.pipeline.workflows import ConfigurationError
from memos.services.access import visible_runs
from memos.services.accounts import Roles, has_role
from memos.services.errors import ServiceError
from memos.services.home_rows import Schedule
from memos.services.runs import ask_watchlist

CATCH_UP = timedelta(hours=24)
QUESTION = "Weekly screen: which symbols on the watchlist moved on their own this week, and why?"


def due_slot(now: datetime) -> datetime | None:
    """This week's slot if it has come and is not older than ``CATCH_UP``; None when off or not due."""
    planned = parse_schedule(screen_settings().schedule)
    if planned is None:
        return None
    slot = last_slot(now, *planned)
    return slot if now - slot <= CATCH_UP else None


def weekly_screen(*, now: datetime, enqueue: bool = True) -> str:
    """Start this week's screen if its slot has come and it has not run since; say what was done ("" when
    nothing was due)."""
    try:
        slot = due_slot(now)
    except ScheduleError as exc:
        return f"Weekly screen not started: {exc}"
    if slot is None:
        return ""
    owner_name = screen_settings().schedule_owner
    owner = User.objects.filter(username=owner_name, is_active=True).first()
    if owner is None or not has_role(owner, Roles.ANALYST):
        return f"Weekly screen not started: {owner_name!r} is not an active analyst."
    if Run.objects.filter(
        workflow=SCREEN, brief__owner=owner, brief__question=QUESTION, created_at__gte=slot
    ).exists():
        return ""
    return _start(owner, slot, enqueue=enqueue)


def _start(owner: User, slot: datetime, *, enqueue: bool) -> str:
    try:
        strategy = this_weeks_strategy()
        run = ask_watchlist(
            owner=owner,
            symbols=default_symbols(strategy),
            question=QUESTION,
            workflow=SCREEN,
            profile=WEEKLY,
            options={"strategy": strategy.model_dump(mode="json")},
            enqueue=enqueue,
            scheduled=True,
        )
    except (ServiceError, ConfigurationError) as exc:
        return f"Weekly screen not started: {exc}"
    return f"Started the weekly screen, run {str(run.pk)[:8]}, for the slot of {slot:%Y-%m-%d %H:%M} UTC."


def screens_due(now: datetime) -> list[str]:
    """The screen's part of the scheduler's tick (memos.services.scheduler)."""
    said = weekly_screen(now=now)
    return [said] if said else []


def home_schedules(user: User, admin: bool, now: datetime) -> list[Schedule]:
    """The weekly screen (``SCREEN_SCHEDULE``) for its owner and the admins, on the home page."""
    owner = screen_settings().schedule_owner
    if not admin and user.username != owner:
        return []
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
        .filter(workflow=SCREEN, brief__owner__username=owner, brief__question=QUESTION)
        .order_by("-created_at")
        .first()
    )
    return [
        Schedule(
            what="weekly screen",
            brief_subject="the strategy's watchlist",
            question=f"as {owner}'s brief (SCREEN_SCHEDULE_OWNER)",
            cadence=cadence,
            next_due=last_slot(now, *planned) + timedelta(days=7) if planned is not None else None,
            last_outcome=f"started run {str(last.pk)[:8]} · {last.get_status_display().lower()}"
            if last
            else "",
            last_outcome_at=last.created_at if last else None,
            last_run_id=last.pk if last else None,
            version_id=None,
        )
    ]
