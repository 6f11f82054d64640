"""A memo brief's weekly position (seed 000: "weekly positions"): once a week, at the day and time its analyst
set (UTC), the scheduler's tick writes the brief's memo again as the next version of its memo line, with the
profile of the memo before it. With unchanged data and prompts the ledger answers every call (no LLM cost); a
new filing or a moved price shows as a new version, its drift against the last one flagged on its page.

Each weekly time is acted on once, its outcome recorded, whether the run starts or is refused (a run of the
brief still going, its analyst no longer an active analyst). A time more than a day old is let go: a desk
started on Thursday does not write Monday's memo unasked. Changing the schedule never starts a run at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.weekly import DAY_NAMES, DAYS, last_slot
from memos.models import Brief, MemoSchedule, Run
from memos.models.schedules import MEMO_DEFAULT_TIME
from memos.services.access import may_set_schedule, visible_runs
from memos.services.errors import ServiceError
from memos.services.home_rows import Schedule, held, newest_versions, openable
from memos.services.runs import BriefBusy, check_owner_still_analyst, start_run
from memos.services.versions import latest_in_line

MEMO = "memo"
CATCH_UP = timedelta(hours=24)


@dataclass(frozen=True)
class MemoSchedulePanel:
    enabled: bool
    weekday: int
    at: time
    next_due: datetime | None
    last_outcome: str
    last_outcome_at: datetime | None
    last_run_id: UUID | None  # only when this reader may open the run
    may_set: bool
    held_off_by_admin: bool = False

    @property
    def day_name(self) -> str:
        return DAY_NAMES[self.weekday]

    @property
    def days(self) -> list[tuple[int, str]]:
        return list(enumerate(DAY_NAMES))


def is_memo_brief(brief: Brief) -> bool:
    return latest_in_line(brief, MEMO) is not None


def set_memo_schedule(
    *,
    brief: Brief,
    user: User,
    enabled: bool,
    weekday: int = 0,
    at: time = MEMO_DEFAULT_TIME,
    now: datetime | None = None,
) -> MemoSchedule:
    """Set the brief's weekly memo, or refuse with why. An admin's switch-off holds: the brief's analyst
    cannot switch it back on, only an admin (as a deck's refinement schedule)."""
    if not may_set_schedule(user, brief):
        raise ServiceError("only the brief's analyst or an admin sets its weekly memo")
    if not is_memo_brief(brief):
        raise ServiceError(f"{brief} has no memo version yet: a weekly memo writes the next one of its line")
    if not 0 <= weekday < len(DAYS):
        raise ServiceError(f"no such day of the week: {weekday} (0 is Monday, 6 Sunday)")
    by_admin = user.is_superuser
    with transaction.atomic():
        # Locked: a tick acting on this schedule finishes first, and reads the new settings after.
        schedule = MemoSchedule.objects.select_for_update().filter(brief=brief).first()
        if schedule is not None and schedule.held_off_by_admin and not by_admin and enabled:
            raise ServiceError(
                f"An admin switched this weekly memo off ({schedule.set_at:%Y-%m-%d %H:%M} UTC): only an "
                "admin switches it back on."
            )
        # An admin's choice sets the hold or lifts it; the analyst's keeps it as it is (off, if held).
        held = (not enabled) if by_admin else bool(schedule and schedule.held_off_by_admin)
        schedule, _ = MemoSchedule.objects.update_or_create(
            brief=brief,
            defaults={
                "enabled": enabled,
                "held_off_by_admin": held,
                "weekday": weekday,
                "at": at,
                "set_by": user,
                "set_at": now or timezone.now(),
            },
        )
    return schedule


def next_due(schedule: MemoSchedule, now: datetime) -> datetime | None:
    if not schedule.enabled:
        return None
    return last_slot(now, schedule.weekday, schedule.at) + timedelta(days=7)


def memo_schedule_panel(user: User, brief: Brief, *, now: datetime | None = None) -> MemoSchedulePanel | None:
    """The weekly memo of a brief as ``user`` sees it; None for a brief with no memo line."""
    if not is_memo_brief(brief):
        return None
    schedule = MemoSchedule.objects.filter(brief=brief).first()
    may_set = may_set_schedule(user, brief)
    if schedule is None:
        return MemoSchedulePanel(False, 0, MEMO_DEFAULT_TIME, None, "", None, None, may_set)
    run_id = schedule.last_run_id
    if run_id is not None and not visible_runs(user).filter(pk=run_id).exists():
        run_id = None
    return MemoSchedulePanel(
        enabled=schedule.enabled,
        weekday=schedule.weekday,
        at=schedule.at,
        next_due=next_due(schedule, now or timezone.now()),
        last_outcome=schedule.last_outcome,
        last_outcome_at=schedule.last_outcome_at,
        last_run_id=run_id,
        # Held off by an admin: the form is the admin's alone.
        may_set=may_set and (user.is_superuser or not schedule.held_off_by_admin),
        held_off_by_admin=schedule.held_off_by_admin,
    )


def due_memos(*, now: datetime, enqueue: bool = True) -> list[str]:
    """Write the memo of every brief whose weekly time has come and was not acted on; say what was done."""
    done = []
    for schedule_id in MemoSchedule.objects.filter(enabled=True).values_list("pk", flat=True):
        outcome = _act_on(schedule_id, now, enqueue=enqueue)
        if outcome:
            done.append(outcome)
    return done


def _is_due(schedule: MemoSchedule, now: datetime) -> datetime | None:
    slot = last_slot(now, schedule.weekday, schedule.at)
    if slot <= schedule.set_at or now - slot > CATCH_UP:
        return None
    if schedule.last_slot_at is not None and slot <= schedule.last_slot_at:
        return None
    return slot


def _act_on(schedule_id: int, now: datetime, *, enqueue: bool) -> str:
    with transaction.atomic():
        schedule = (
            MemoSchedule.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("brief__owner")
            .filter(pk=schedule_id)
            .first()
        )
        if schedule is None or not schedule.enabled:
            return ""
        slot = _is_due(schedule, now)
        if slot is None:
            return ""
        brief = schedule.brief
        try:
            with transaction.atomic():
                check_owner_still_analyst(brief)
                last = latest_in_line(brief, MEMO)
                profile = (
                    Run.objects.filter(pk=last.run_id).values_list("profile", flat=True).first()
                    if last
                    else None
                )
                run = start_run(
                    brief=brief,
                    user=brief.owner,
                    workflow=MEMO,
                    profile=profile or "quick",
                    enqueue=enqueue,
                    scheduled=True,
                )
        except BriefBusy as exc:
            # Passes when the other run ends: the slot is kept, and the next tick (within CATCH_UP) tries
            # again, instead of the week going by unwritten.
            message = f"Weekly memo waiting: {exc} The next check tries again."
            schedule.last_outcome, schedule.last_outcome_at = message, now
            schedule.save(update_fields=["last_outcome", "last_outcome_at"])
            return f"brief {brief.pk}: {message}"
        except ServiceError as exc:
            message = f"Weekly memo not started: {exc}"
        else:
            schedule.last_run = run
            message = f"Weekly memo started: run {str(run.pk)[:8]}."
        schedule.last_slot_at, schedule.last_outcome, schedule.last_outcome_at = slot, message, now
        schedule.save(update_fields=["last_slot_at", "last_run", "last_outcome", "last_outcome_at"])
    return f"brief {brief.pk}: {message}"


def home_schedules(user: User, admin: bool, now: datetime) -> list[Schedule]:
    """The weekly memos of the analyst's briefs (every brief's for an admin), on the home page."""
    weeklies = list(
        MemoSchedule.objects.filter(Q() if admin else Q(brief__owner=user)).select_related("brief__company")
    )
    may_open = openable(user, (s.last_run_id for s in weeklies))
    newest = newest_versions(s.brief_id for s in weeklies)
    return [
        Schedule(
            what="weekly memo",
            brief_subject=weekly.brief.subject,
            question=weekly.brief.question,
            cadence=held(
                f"every {DAY_NAMES[weekly.weekday]} at {weekly.at:%H:%M} UTC" if weekly.enabled else "off",
                weekly.held_off_by_admin,
            ),
            next_due=next_due(weekly, now),
            last_outcome=weekly.last_outcome,
            last_outcome_at=weekly.last_outcome_at,
            last_run_id=weekly.last_run_id if weekly.last_run_id in may_open else None,
            version_id=newest.get((weekly.brief_id, "memo")),
        )
        for weekly in weeklies
    ]
