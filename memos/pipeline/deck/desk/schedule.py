"""Refinement cycles on a schedule: who may set a deck brief's schedule, what a reader sees of it (the panel
a deck's page includes, templates/memos/decks/_schedule.html), and the scheduler's check that starts the
cycles that are due (memos.pipeline.deck.desk.cycles.start_cycle).

The scheduler's tick (memos.services.scheduler) runs ``cycles_due`` every few minutes. Two checks at once
start one cycle: each locks the schedule's row and records the time of day it acts on before it starts
anything (memos.models.schedules). A cycle starts only while the brief's analyst is still an active analyst
(memos.pipeline.deck.desk.cycles); when not, the schedule's last outcome says why. An admin's switch-off
holds: the analyst cannot switch the schedule back on, only an admin.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memos.models import ArtefactVersion, Brief, RefineSchedule
from memos.models.schedules import FIRST_SLOT, SECOND_SLOT
from memos.pipeline.deck.desk.cycles import CYCLES_PER_DAY, cycles_today, start_cycle
from memos.services.access import may_set_schedule, visible_runs
from memos.services.errors import ServiceError
from memos.services.home_rows import Schedule, held, newest_versions, openable

# The cadences a person chooses from: cycles a day, 0 for off.
CADENCES: tuple[tuple[int, str], ...] = ((0, "Off"), (1, "Once a day"), (2, "Twice a day"))


@dataclass(frozen=True)
class CycleOutcome:
    """What one check did for one schedule: started a cycle (``run_id``) or recorded why not."""

    schedule_id: int
    brief_id: int
    slot: datetime
    run_id: UUID | None
    message: str

    @property
    def started(self) -> bool:
        return self.run_id is not None

    def __str__(self) -> str:
        return f"brief {self.brief_id}, {self.slot:%Y-%m-%d %H:%M} UTC: {self.message}"


def is_deck_brief(brief: Brief) -> bool:
    """A brief with a deck line: only a deck is refined by cycles (a memo beside it is a line of its own)."""
    return ArtefactVersion.objects.filter(brief=brief, kind="deck").exists()


def set_schedule(
    *,
    brief: Brief,
    user: User,
    cycles_per_day: int,
    first_slot: time = FIRST_SLOT,
    second_slot: time = SECOND_SLOT,
    now: datetime | None = None,
) -> RefineSchedule:
    """Refine ``brief`` 0 (off), 1 or 2 times a day at these times of day (UTC). Changing the cadence or the
    times starts nothing at once: the next time of day after ``now`` does. An admin who switches it off holds
    it off (``held_off_by_admin``): only an admin switches it back on."""
    if not may_set_schedule(user, brief):
        raise ServiceError("Only the brief's analyst or an admin sets when its deck is refined.")
    if cycles_per_day not in range(RefineSchedule.MAX_CYCLES_PER_DAY + 1):
        raise ServiceError(
            f"A deck is refined on a schedule at most {RefineSchedule.MAX_CYCLES_PER_DAY} times a day."
        )
    if cycles_per_day == RefineSchedule.MAX_CYCLES_PER_DAY and first_slot == second_slot:
        raise ServiceError("Twice a day needs two different times of day.")
    if not is_deck_brief(brief):
        raise ServiceError(f"{brief} has no deck version; only a deck is refined by cycles.")
    now = now or timezone.now()
    enabled = cycles_per_day > 0
    wanted = {
        "enabled": enabled,
        "cycles_per_day": cycles_per_day if enabled else 1,
        "first_slot": first_slot,
        "second_slot": second_slot,
    }
    by_admin = user.is_superuser
    with transaction.atomic():
        # Locked: a check acting on this schedule finishes first, and reads the new settings after.
        schedule, created = RefineSchedule.objects.select_for_update().get_or_create(
            brief=brief,
            defaults={**wanted, "held_off_by_admin": by_admin and not enabled, "set_by": user, "set_at": now},
        )
        if created:
            return schedule
        if schedule.held_off_by_admin and not by_admin and enabled:
            raise ServiceError(
                f"An admin switched this schedule off ({schedule.set_at:%Y-%m-%d %H:%M} UTC): only an admin "
                "switches it back on."
            )
        # An admin's choice sets the hold or lifts it; the analyst's keeps it as it is (off, if held).
        wanted["held_off_by_admin"] = (not enabled) if by_admin else schedule.held_off_by_admin
        if any(getattr(schedule, name) != value for name, value in wanted.items()):
            for name, value in wanted.items():
                setattr(schedule, name, value)
            schedule.set_by, schedule.set_at = user, now
            schedule.save()
    return schedule


@dataclass(frozen=True)
class SchedulePanel:
    """What the panel shows one reader: the cadence as set (or the defaults), when the next cycle starts,
    what the last attempt did, and whether this reader may change it."""

    cycles: int  # 0 when off
    first_slot: time
    second_slot: time
    next_due: datetime | None
    last_outcome: str
    last_outcome_at: datetime | None
    last_run_id: UUID | None  # only when this reader may open the run
    may_set: bool
    held_off_by_admin: bool = False
    choices: tuple[tuple[int, str], ...] = CADENCES
    cycles_today: int = 0  # started since midnight UTC, the schedule's and "refine now" together
    cycles_per_day: int = CYCLES_PER_DAY

    @property
    def may_refine_now(self) -> bool:
        return self.may_set and not self.held_off_by_admin and self.cycles_today < self.cycles_per_day


def schedule_panel(user: User, brief: Brief, *, now: datetime | None = None) -> SchedulePanel | None:
    """The schedule of a deck brief as ``user`` sees it, for a page they already may read; None for a brief
    with no deck version (nothing to refine)."""
    if not is_deck_brief(brief):
        return None
    schedule = RefineSchedule.objects.filter(brief=brief).first()
    may_set = may_set_schedule(user, brief)
    today = cycles_today(brief, now=now)
    if schedule is None:
        return SchedulePanel(0, FIRST_SLOT, SECOND_SLOT, None, "", None, None, may_set, cycles_today=today)
    run_id = schedule.last_run_id
    if run_id is not None and not visible_runs(user).filter(pk=run_id).exists():
        run_id = None
    if schedule.held_off_by_admin and not user.is_superuser:
        may_set = False  # the analyst's form would only be refused
    return SchedulePanel(
        cycles=schedule.cycles_per_day if schedule.enabled else 0,
        first_slot=schedule.first_slot,
        second_slot=schedule.second_slot,
        next_due=schedule.next_due(now or timezone.now()),
        last_outcome=schedule.last_outcome,
        last_outcome_at=schedule.last_outcome_at,
        last_run_id=run_id,
        may_set=may_set,
        held_off_by_admin=schedule.held_off_by_admin,
        cycles_today=today,
    )


def run_due(*, now: datetime, enqueue: bool = True) -> list[CycleOutcome]:
    """Start a cycle for every schedule with a time of day passed and not yet acted on; record each outcome,
    a refusal included (a run of the brief still going, no deck version left...), and return them."""
    candidates = RefineSchedule.objects.filter(enabled=True).only(
        "pk", "enabled", "cycles_per_day", "first_slot", "second_slot", "set_at", "last_slot_at"
    )
    outcomes = []
    for candidate in candidates:
        if candidate.is_due(now):
            outcome = _act_on(candidate.pk, now, enqueue=enqueue)
            if outcome is not None:
                outcomes.append(outcome)
    return outcomes


def _act_on(schedule_id: int, now: datetime, *, enqueue: bool) -> CycleOutcome | None:
    with transaction.atomic():
        # Another check holding the row is acting on it now: skip it rather than wait and do it twice. Once
        # the lock is ours the row is read afresh, so a check that finished first leaves it not due.
        schedule = (
            RefineSchedule.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("brief__company")
            .filter(pk=schedule_id)
            .first()
        )
        if schedule is None or not schedule.is_due(now):
            return None
        slot = schedule.latest_slot(now)
        run_id = None
        try:
            # Its own savepoint: a refused start rolls back what it wrote, and this row is still saved.
            with transaction.atomic():
                # The schedule's cycle is the desk's own work: after people's runs.
                run = start_cycle(brief=schedule.brief, enqueue=enqueue, now=now, scheduled=True)
        except ServiceError as exc:
            message = f"Not started: {exc}"
        else:
            run_id = run.pk
            message = f"Started cycle run {str(run.pk)[:8]}."
            schedule.last_cycle_at, schedule.last_run = now, run
        schedule.last_slot_at, schedule.last_outcome, schedule.last_outcome_at = slot, message, now
        schedule.save(
            update_fields=["last_slot_at", "last_cycle_at", "last_run", "last_outcome", "last_outcome_at"]
        )
    return CycleOutcome(schedule.pk, schedule.brief_id, slot, run_id, message)


def cycles_due(now: datetime) -> list[str]:
    """The deck's part of the scheduler's tick (memos.services.scheduler)."""
    return [str(outcome) for outcome in run_due(now=now)]


def home_schedules(user: User, admin: bool, now: datetime) -> list[Schedule]:
    """The refinement cycles of the analyst's deck briefs (every brief's for an admin), on the home page."""
    cycles = list(
        RefineSchedule.objects.filter(Q() if admin else Q(brief__owner=user)).select_related("brief__company")
    )
    may_open = openable(user, (s.last_run_id for s in cycles))
    newest = newest_versions(s.brief_id for s in cycles)
    return [
        Schedule(
            what="deck refinement",
            brief_subject=cycle.brief.subject,
            question=cycle.brief.question,
            cadence=held(cycle.cadence, cycle.held_off_by_admin),
            next_due=cycle.next_due(now),
            last_outcome=cycle.last_outcome,
            last_outcome_at=cycle.last_outcome_at,
            last_run_id=cycle.last_run_id if cycle.last_run_id in may_open else None,
            version_id=newest.get((cycle.brief_id, "deck")),
        )
        for cycle in cycles
    ]
