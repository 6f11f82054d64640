"""Spending caps that hold (issue 31, 5): a person's daily token quota and the ceiling on any run's budget.

A run's budget is what the LLM gateway lets it spend (agents.llm.gateway reserves every call against it), so
the caps hold by construction: a run starts with a budget no larger than the ceiling
(``LLM_RUN_BUDGET_MAX_TOKENS``) nor than what is left of its starter's day (``LLM_USER_DAILY_TOKENS``, a UTC
day). What a day has used is every token the person's runs of the day spent, and for a run still queued or
running its whole budget (it may yet spend it): two runs started at once cannot both count on the same
remainder, since the check runs with the person's row locked (memos.services.runs.check_active_runs).
Runs the desk starts in a person's name (a schedule, newer figures) count toward that person's day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from memos.models import Run
from memos.services.errors import ServiceError

# Below this, a run could not make one full call: the day is spent.
LEAST_RUN_TOKENS = 10_000


@dataclass(frozen=True)
class Day:
    """A person's tokens today, as the brief form shows them."""

    used: int  # spent by the day's runs, and committed to those still going
    quota: int | None  # None: no daily quota

    @property
    def left(self) -> int | None:
        return None if self.quota is None else max(self.quota - self.used, 0)

    @property
    def line(self) -> str:
        if self.quota is None:
            return f"{self.used:,} tokens used today; no daily quota."
        return (
            f"{self.used:,} of your {self.quota:,} tokens today used or set aside for runs still going; "
            f"{self.left:,} left until 00:00 UTC."
        )


def today(user: User) -> Day:
    start = datetime.combine(timezone.now().astimezone(UTC).date(), time.min, tzinfo=UTC)
    used = 0
    rows = Run.objects.filter(created_by=user, created_at__gte=start).values_list(
        "status", "tokens_spent", "budget_tokens"
    )
    for status, spent, budget in rows:
        going = status in Run.ACTIVE_STATUSES
        used += max(spent, budget or 0) if going else spent
    return Day(used=used, quota=settings.LLM_SETTINGS.user_daily_tokens)


def capped_budget(user: User, budget: int | None) -> int | None:
    """The budget a run ``user`` starts now may have: the workflow's, under the ceiling and within what is
    left of their day; refused with a person's message when the day is spent. Call it inside the transaction
    that creates the run, after ``check_active_runs`` has locked the person's row."""
    ceiling = settings.LLM_SETTINGS.run_budget_max_tokens
    if ceiling is not None:
        budget = min(budget, ceiling) if budget is not None else ceiling
    day = today(user)
    if day.left is None:
        return budget
    if day.left < LEAST_RUN_TOKENS:
        raise ServiceError(
            f"You have used your daily token quota ({day.used:,} of {day.quota:,} tokens today, counting the "
            "budgets of runs still going); it renews at 00:00 UTC, or an admin raises LLM_USER_DAILY_TOKENS."
        )
    return min(budget, day.left) if budget is not None else day.left
