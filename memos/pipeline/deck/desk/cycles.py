"""Refinement cycles of a deck brief (seed 001, "G2 refinement cycle, up to 2x/day"): a deck run that
continues from the brief's latest deck version. The scheduler (memos.pipeline.deck.desk.schedule) starts them;
so may a person. A second cycle while one runs is refused by the one-active-run-per-brief rule, and so is a
cycle of a brief whose analyst is no longer an active analyst (the cycle would be started in their name); a
cycle that finds the best already at the ship bar with no new data and no new rubric makes no LLM call and
freezes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from memos.models import ArtefactVersion, Brief, RefineSchedule, Run
from memos.pipeline.deck.plan import NAME as DECK
from memos.services.errors import ServiceError
from memos.services.runs import check_owner_still_analyst, start_run
from memos.services.versions import latest_in_line

# Seed 001: "G2 refinement cycle, up to 2x/day".
CYCLES_PER_DAY = 2


def latest_deck(brief: Brief) -> ArtefactVersion | None:
    """The head of the brief's deck line, which a cycle continues from (a memo beside it is another line)."""
    return latest_in_line(brief, DECK)


def cycles_today(brief: Brief, *, now: datetime | None = None) -> int:
    """Refinement cycles of the brief started on ``now``'s day (UTC), by the schedule or by a person."""
    midnight = (now or timezone.now()).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day = (midnight, midnight + timedelta(days=1))
    return (
        Run.objects.filter(brief=brief, workflow=DECK, created_at__range=day)
        .filter(config__has_key="base_version")
        .exclude(config__base_version=None)
        .count()
    )


def start_cycle(
    *,
    brief: Brief,
    asked_by: User | None = None,
    enqueue: bool = True,
    now: datetime | None = None,
    scheduled: bool = False,
    part_of: Run | None = None,
) -> Run:
    """Start a cycle on the brief's latest deck version, as the brief's owner; ServiceError says why not.
    At most ``CYCLES_PER_DAY`` a day (UTC), the schedule's and a person's "refine now" counted together.
    ``asked_by`` is the person who pressed "refine now" (None: the scheduler): while an admin holds the
    brief's refinement off, only an admin may start one (the scheduler starts none: the schedule is off).
    ``scheduled`` and ``part_of`` as ``start_run`` takes them (the desk's week starts cycles as its parts)."""
    held = RefineSchedule.objects.filter(brief=brief, held_off_by_admin=True).exists()
    if held and asked_by is not None and not asked_by.is_superuser:
        raise ServiceError(
            "an admin has switched this deck's refinement off: only an admin may start a cycle now."
        )
    check_owner_still_analyst(brief)
    if cycles_today(brief, now=now) >= CYCLES_PER_DAY:
        raise ServiceError(
            f"this deck has had its {CYCLES_PER_DAY} refinement cycles today (UTC): the next may start "
            "tomorrow."
        )
    base = latest_deck(brief)
    if base is None:
        raise ServiceError(f"{brief} has no deck version yet: a refinement cycle continues from one.")
    if base.scores.get("escalated"):
        raise ServiceError(
            f"{base.label} never cleared the entry bar: there is nothing to refine; start a new deck run."
        )
    profile = Run.objects.filter(pk=base.run_id).values_list("profile", flat=True).first() or "quick"
    return start_run(
        brief=brief,
        user=brief.owner,
        workflow=DECK,
        profile=profile,
        options={"base_version": base.pk},
        enqueue=enqueue,
        scheduled=scheduled,
        part_of=part_of,
    )
