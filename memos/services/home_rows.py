"""What a workflow adds to its readers' home pages (``Surface.schedules``, ``Surface.home_actions``): the
schedules an analyst keeps, and the actions the page offers; the home page (memos.views.home) gathers them
from every workflow's surface and names none."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from memos.models import ArtefactVersion

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class Schedule:
    """One of the analyst's schedules as the home page lists it."""

    what: str  # "deck refinement", "weekly memo", "weekly screen", "the desk's week"
    brief_subject: str
    question: str
    cadence: str
    next_due: datetime | None
    last_outcome: str
    last_outcome_at: datetime | None
    last_run_id: object  # a run id the reader may open, or None
    version_id: int | None  # where the schedule is set: its brief's newest version
    first: bool = False  # listed before the briefs' own schedules (the desk's week)


# (reader, an admin, now) -> the reader's schedules of the workflow (every one for an admin).
Schedules = Callable[["User", bool, datetime], list[Schedule]]


@dataclass(frozen=True)
class HomeAction:
    """A button of the home page's action bar: a template, for the readers ``shown`` admits (given the
    reader and the roles the page has read for them)."""

    template: str
    shown: Callable[[User, frozenset[str]], bool]


def held(cadence: str, by_admin: bool) -> str:
    return f"{cadence} (an admin holds it off)" if by_admin else cadence


def openable(user: User, run_ids: Iterable[UUID | None]) -> set[UUID]:
    """Which of these last runs of schedules the reader may open (a brief an admin handed them may have
    runs they may not see): only those are linked."""
    from memos.services.access import visible_runs

    wanted = {run_id for run_id in run_ids if run_id is not None}
    return set(visible_runs(user).filter(pk__in=wanted).values_list("pk", flat=True)) if wanted else set()


def newest_versions(briefs: Iterable[int]) -> dict[tuple[int, str], int]:
    """Each brief's newest version of each kind: the page where its schedule is set."""
    found: dict[tuple[int, str], int] = {}
    rows = ArtefactVersion.objects.filter(brief_id__in=set(briefs)).order_by("number")
    for brief_id, kind, pk in rows.values_list("brief_id", "kind", "pk"):
        found[(brief_id, kind)] = pk  # ordered by number: the newest wins
    return found
