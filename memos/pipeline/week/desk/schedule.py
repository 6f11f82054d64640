"""The desk's week on its schedule (``DESK_WEEK_SCHEDULE``, "fri 21:30" UTC by default: after Friday's US
close): the scheduler's tick (memos.services.scheduler) starts it once a slot. The first slot acted on is
the first one after the tick first met the schedule (``WeekSchedule.first_seen_at``): a desk installed on a
Saturday waits for next Friday instead of starting a week at once for the slot that passed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction

from agents.weekly import DAY_NAMES, ScheduleError, last_slot, parse_schedule
from memos.models import WeekSchedule
from memos.pipeline.week.desk.start import start_week
from memos.pipeline.week.settings import week_settings
from memos.services.errors import ServiceError
from memos.services.home_rows import Schedule, openable


def claim_slot(now: datetime) -> datetime | None:
    """The slot to act on now, recorded as acted on; None when nothing is due (off, or already acted on, or
    a slot before the desk first met the schedule)."""
    try:
        planned = parse_schedule(week_settings().schedule, setting="DESK_WEEK_SCHEDULE")
    except ScheduleError:
        return None
    if planned is None:
        return None
    with transaction.atomic():
        row, created = WeekSchedule.objects.select_for_update().get_or_create(
            name="week", defaults={"first_seen_at": now}
        )
        slot = last_slot(now, *planned)
        acted = row.first_seen_at if row.last_slot_at is None else max(row.first_seen_at, row.last_slot_at)
        if created or slot <= acted:
            return None
        row.last_slot_at = slot
        row.save(update_fields=["last_slot_at"])
    return slot


@dataclass(frozen=True)
class WeekSlot:
    """The week's schedule as a page shows it."""

    cadence: str  # "every Friday at 21:30 UTC", or why it is off
    next_due: datetime | None
    last_outcome: str
    last_outcome_at: datetime | None
    last_run_id: UUID | None


def week_slot(now: datetime) -> WeekSlot:
    row = WeekSchedule.objects.filter(name="week").first()
    last = (row.last_outcome, row.last_outcome_at, row.last_run_id) if row else ("", None, None)
    try:
        planned = parse_schedule(week_settings().schedule, setting="DESK_WEEK_SCHEDULE")
    except ScheduleError as exc:
        return WeekSlot(f"not running: {exc}", None, *last)
    if planned is None:
        return WeekSlot("off (DESK_WEEK_SCHEDULE)", None, *last)
    slot = last_slot(now, *planned)
    # A slot passed before the desk first met the schedule, or already acted on, is not due: the next one is.
    acted = None if row is None else max(row.first_seen_at, row.last_slot_at or row.first_seen_at)
    due = slot if acted is not None and slot > acted else slot + timedelta(days=7)
    return WeekSlot(f"every {DAY_NAMES[planned[0]]} at {planned[1]:%H:%M} UTC", due, *last)


def weeks_due(now: datetime) -> list[str]:
    """The week's part of the scheduler's tick: a line when it started one or could not."""
    slot = claim_slot(now)
    if slot is None:
        return []
    try:
        run = start_week()
    except ServiceError as exc:
        said = f"The desk's week not started for the slot of {slot:%Y-%m-%d %H:%M} UTC: {exc}"
        WeekSchedule.objects.filter(name="week").update(last_outcome=said, last_outcome_at=now)
        return [said]
    said = f"Started the desk's week, run {str(run.pk)[:8]}, for the slot of {slot:%Y-%m-%d %H:%M} UTC."
    WeekSchedule.objects.filter(name="week").update(last_run=run, last_outcome=said, last_outcome_at=now)
    return [said]


def home_schedules(user: User, admin: bool, now: datetime) -> list[Schedule]:
    """The desk's week (``DESK_WEEK_SCHEDULE``) for its owner and the admins, first on the home page."""
    owner = week_settings().owner
    if not admin and user.username != owner:
        return []
    slot = week_slot(now)
    may_open = openable(user, [slot.last_run_id])
    return [
        Schedule(
            what="the desk's week",
            brief_subject="the desk's watchlist",
            question=f"screen, closer looks, decks, digest, as {owner}'s (DESK_WEEK_OWNER)",
            cadence=slot.cadence,
            next_due=slot.next_due,
            last_outcome=slot.last_outcome,
            last_outcome_at=slot.last_outcome_at,
            last_run_id=slot.last_run_id if slot.last_run_id in may_open else None,
            version_id=None,
            first=True,
        )
    ]
