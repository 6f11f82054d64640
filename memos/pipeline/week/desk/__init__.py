"""The desk's week as the rest of the desk knows it: the digest as its version's page (frozen for every
reader, printed as its PDF) with each reader's votes on the versions it links, its e-mail, the schedule
the scheduler's tick starts, "Run this week now", and its command (``manage.py week``, also ``run week``).

This module is the week's one public module for code outside its package (memos.services.surfaces reads
``SURFACE``); the run engine never imports it (memos.pipeline.week names it in its ``Workflow``).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.management.base import BaseCommand
from django.urls import URLPattern, path

from memos.models import ArtefactVersion
from memos.pipeline.week.desk.bench import week_bench
from memos.pipeline.week.desk.digest_page import page_context, votes_context
from memos.pipeline.week.desk.schedule import home_schedules, weeks_due
from memos.services.accounts import Roles
from memos.services.home_rows import HomeAction
from memos.services.surfaces import Panel, Surface, VersionPage

__all__ = ["SURFACE", "week_bench"]


def _urls() -> Sequence[URLPattern]:
    from memos.pipeline.week.desk.views import run_week_now

    return (path("week/run-now/", run_week_now, name="week_run_now"),)


def _command() -> type[BaseCommand]:
    from memos.pipeline.week.desk.command import WeekCommand

    return WeekCommand


def _mail(version: ArtefactVersion) -> list[str]:
    """The digest, section by section, in its e-mail."""
    return [f"{title}:\n{text}\n" for title, text in version.sections.items()]


SURFACE = Surface(
    version=VersionPage(
        template="memos/week/_version_digest.html",
        context=page_context,
        panels=(Panel("memos/week/_votes.html", votes_context, place="top"),),
        mail=_mail,
    ),
    urls=_urls,
    ticks=(weeks_due,),
    schedules=home_schedules,
    home_actions=(
        HomeAction(
            "memos/week/_home_action.html",
            lambda user, roles: user.is_active and (user.is_superuser or Roles.ANALYST in roles),
        ),
    ),
    command=_command,
    readable=lambda version: page_context(version)["digest"] is not None,
)
