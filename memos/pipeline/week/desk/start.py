"""Starting the desk's week: by its schedule, by ``manage.py week``, or by "Run this week now" on the home
page. Whoever asks, the week is the desk's scheduled work (``Run.scheduled``): it and its parts run after
people's runs, on the queue and on the LLM's slots, and run in the name of ``DESK_WEEK_OWNER``."""

from __future__ import annotations

from datetime import date

from django.contrib.auth.models import User

from memos.models import Run
from memos.pipeline.week.plan import NAME as WEEK
from memos.pipeline.week.profiles import WEEKLY
from memos.pipeline.week.settings import week_settings
from memos.pipeline.week.workflow import screened_watchlist
from memos.pipeline.workflows import ConfigurationError
from memos.services.accounts import Roles, has_role
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist

QUESTION = (
    "The desk's week: the watchlist screened after Friday's close, a closer look at the names that moved on "
    "their own, the decks the committee follows refreshed, and one digest."
)


def week_owner() -> User:
    """The analyst the week's runs belong to (``DESK_WEEK_OWNER``); ServiceError when there is none."""
    name = week_settings().owner
    owner = User.objects.filter(username=name, is_active=True).first()
    if owner is None or not has_role(owner, Roles.ANALYST):
        raise ServiceError(f"{name!r} (DESK_WEEK_OWNER) is not an active analyst, so no week can start.")
    return owner


def may_start_week(user: User) -> bool:
    """An analyst or an admin may start the week now."""
    return bool(user.is_active and (user.is_superuser or has_role(user, Roles.ANALYST)))


def start_week(
    *,
    as_of: date | None = None,
    max_names: int | None = None,
    symbols: list[str] | None = None,
    enqueue: bool = True,
) -> Run:
    """The week's run on the desk's watchlist (or ``symbols``), for ``as_of`` (the latest week the data holds
    when None); ServiceError with a person's message when it cannot start (one already running, no owner)."""
    owner = week_owner()
    options: dict[str, object] = {"as_of": as_of.isoformat() if as_of else None}
    if max_names is not None:
        options["max_names"] = max_names
    try:
        watchlist = symbols or screened_watchlist()
    except ConfigurationError as exc:
        raise ServiceError(str(exc)) from exc
    return ask_watchlist(
        owner=owner,
        symbols=watchlist,
        question=QUESTION,
        workflow=WEEK,
        profile=WEEKLY,
        options=options,
        enqueue=enqueue,
        scheduled=True,
    )
