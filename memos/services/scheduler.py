"""The scheduler's tick: what every workflow starts on its own when its time comes (a deck's refinement
cycles, a memo's weekly position, the weekly screen: each workflow's ``Surface.ticks``), and, in live mode,
the watched companies' daily SEC refresh (memos.services.fact_refresh).

RQ's cron scheduler (``manage.py refine_cycles --cron``, started by scripts/run.sh) queues ``tick`` every few
minutes for a worker; ``manage.py refine_cycles`` runs the same check in a loop of its own, or ``--once``.
Each workflow's tick is safe to run twice at once: it locks what it acts on and records the slot before it
starts anything.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from memos.services.fact_refresh import refresh_due
from memos.services.surfaces import surfaces


def due(*, now: datetime) -> list[str]:
    """One check at ``now``: a line for every run each workflow started or refused, then each refresh."""
    lines = [line for surface in surfaces().values() for tick in surface.ticks for line in tick(now)]
    return lines + [f"refresh SEC figures of {ticker}" for ticker in refresh_due(now=now)]


def tick() -> list[str]:
    """The job RQ's cron scheduler queues: one check, now. Its result, kept in Redis a while, says what it
    did."""
    return due(now=timezone.now())
