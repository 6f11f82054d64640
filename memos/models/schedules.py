"""When a deck brief refines itself: seed 001's "G2 refinement cycle, up to 2x/day", as one row per brief."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from memos.models.runs import Brief, Run

FIRST_SLOT = time(6, 0)
SECOND_SLOT = time(18, 0)


class RefineSchedule(models.Model):
    """A deck brief's refinement cycles: once or twice a day at fixed times of day (UTC), or off.

    Set by the brief's analyst or an admin through ``memos.pipeline.deck.desk.schedule.set_schedule``, which
    also refuses a brief with no deck version. The scheduler's check (``run_due``) locks the row and
    starts a cycle when one of its times of day has passed since ``last_slot_at`` (or since the schedule was
    last changed, ``set_at``: changing it never starts a cycle at once). It records that time of day before
    it tries, so each one is tried once, whether the cycle starts or is refused (a run of the brief still
    going, its analyst no longer an active analyst): ``last_outcome`` says which. An admin's switch-off
    holds (``held_off_by_admin``): the brief's analyst cannot switch it back on, only an admin.
    """

    # Seed 001 caps the cadence at two a day: cost grows with it. A check constraint holds it below.
    MAX_CYCLES_PER_DAY: ClassVar = 2

    brief = models.OneToOneField(Brief, on_delete=models.CASCADE, related_name="refine_schedule")
    enabled = models.BooleanField(default=True)
    cycles_per_day = models.PositiveSmallIntegerField(default=1)
    first_slot = models.TimeField(default=FIRST_SLOT, help_text="time of day, UTC")
    second_slot = models.TimeField(default=SECOND_SLOT, help_text="time of day, UTC; used twice a day")
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    set_at = models.DateTimeField(help_text="when the cadence or the times last changed")
    last_slot_at = models.DateTimeField(
        null=True, blank=True, help_text="the latest time of day the scheduler acted on"
    )
    last_cycle_at = models.DateTimeField(null=True, blank=True, help_text="when the last cycle started")
    last_run = models.ForeignKey(
        Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", help_text="its run"
    )
    last_outcome = models.TextField(blank=True, help_text="what the scheduler's last attempt did")
    last_outcome_at = models.DateTimeField(null=True, blank=True)
    held_off_by_admin = models.BooleanField(
        default=False, help_text="an admin switched it off: only an admin switches it back on"
    )

    class Meta:
        ordering: ClassVar = ["brief"]
        constraints: ClassVar = [
            models.CheckConstraint(
                condition=Q(cycles_per_day__gte=1, cycles_per_day__lte=2),
                name="refine_schedule_one_or_two_cycles_a_day",
            ),
            models.CheckConstraint(
                condition=Q(cycles_per_day=1) | ~Q(first_slot=F("second_slot")),
                name="refine_schedule_two_cycles_at_two_times",
            ),
            # The scheduler starts only enabled schedules (memos.pipeline.deck.desk.schedule.run_due): one an
            # admin holds off is off.
            models.CheckConstraint(
                condition=Q(held_off_by_admin=False) | Q(enabled=False),
                name="refine_schedule_held_off_is_off",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.brief}: {self.cadence}"

    @property
    def slots(self) -> list[time]:
        if self.cycles_per_day >= self.MAX_CYCLES_PER_DAY:
            return sorted({self.first_slot, self.second_slot})
        return [self.first_slot]

    @property
    def cadence(self) -> str:
        if not self.enabled:
            return "off"
        times = " and ".join(slot.strftime("%H:%M") for slot in self.slots)
        return f"{'twice' if self.cycles_per_day >= 2 else 'once'} a day at {times} UTC"

    def _at(self, day: date) -> list[datetime]:
        return [datetime.combine(day, slot, tzinfo=UTC) for slot in self.slots]

    def latest_slot(self, now: datetime) -> datetime:
        """The latest of its times of day at or before ``now`` (today's, else yesterday's)."""
        today = now.astimezone(UTC).date()
        return max(at for day in (today - timedelta(days=1), today) for at in self._at(day) if at <= now)

    def next_slot(self, now: datetime) -> datetime:
        """The first of its times of day after ``now`` (today's, else tomorrow's)."""
        today = now.astimezone(UTC).date()
        return min(at for day in (today, today + timedelta(days=1)) for at in self._at(day) if at > now)

    def is_due(self, now: datetime) -> bool:
        """A time of day has passed that the scheduler has not acted on, since the schedule last changed."""
        if not self.enabled:
            return False
        acted = self.set_at if self.last_slot_at is None else max(self.set_at, self.last_slot_at)
        return self.latest_slot(now) > acted

    def next_due(self, now: datetime) -> datetime | None:
        """When the scheduler starts the next cycle: a passed time of day it has yet to act on, else the next
        one; None when off."""
        if not self.enabled:
            return None
        return self.latest_slot(now) if self.is_due(now) else self.next_slot(now)


MEMO_DEFAULT_TIME = time(7, 0)


class MemoSchedule(models.Model):
    """A memo brief's weekly position (seed 000: "weekly positions"): the brief's memo is written again once a
    week, on ``weekday`` at ``at`` (UTC), as a new version of its memo line; with unchanged data and prompts
    the ledger answers every call, so a quiet week costs nothing. Set by the brief's analyst or an admin
    (memos.pipeline.memo.desk.schedule); the scheduler's tick acts on each weekly time once, recording what it
    did.
    """

    brief = models.OneToOneField(Brief, on_delete=models.CASCADE, related_name="memo_schedule")
    enabled = models.BooleanField(default=True)
    # An admin switched it off: only an admin switches it back on (memos.pipeline.memo.desk.schedule).
    held_off_by_admin = models.BooleanField(default=False)
    weekday = models.PositiveSmallIntegerField(default=0, help_text="0 Monday ... 6 Sunday")
    at = models.TimeField(default=MEMO_DEFAULT_TIME, help_text="time of day, UTC")
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    set_at = models.DateTimeField(help_text="when it was last changed: a change never starts a run at once")
    last_slot_at = models.DateTimeField(null=True, blank=True, help_text="the weekly time last acted on")
    last_run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    last_outcome = models.TextField(blank=True, help_text="what the scheduler's last attempt did")
    last_outcome_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["brief"]
        constraints: ClassVar = [
            models.CheckConstraint(condition=Q(weekday__lte=6), name="memo_schedule_weekday"),
            # The scheduler starts only enabled schedules: one an admin holds off is off.
            models.CheckConstraint(
                condition=Q(held_off_by_admin=False) | Q(enabled=False), name="memo_schedule_held_off_is_off"
            ),
        ]

    def __str__(self) -> str:
        return f"weekly memo of {self.brief_id}: day {self.weekday} at {self.at:%H:%M} UTC"


class WeekSchedule(models.Model):
    """The desk's week on its schedule (``DESK_WEEK_SCHEDULE``): one row, written by the scheduler's tick
    (memos.pipeline.week.desk.schedule). ``first_seen_at`` is when the tick first met the schedule: a slot
    before it is never acted on, so a fresh desk waits for the next slot instead of starting at once for one
    that passed before it was installed. Each slot is acted on once (``last_slot_at``, recorded before the
    week starts), whether the week starts or is refused; ``last_outcome`` says which."""

    name = models.CharField(max_length=40, unique=True, default="week")
    first_seen_at = models.DateTimeField(help_text="when the scheduler first met the schedule")
    last_slot_at = models.DateTimeField(null=True, blank=True, help_text="the latest slot acted on")
    last_run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    last_outcome = models.TextField(blank=True, help_text="what the scheduler's last attempt did")
    last_outcome_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"the desk's {self.name}: last slot {self.last_slot_at or 'none yet'}"
