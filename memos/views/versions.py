"""A frozen version's page: the artefact as frozen, its scores and sources, its diff against the version
before it in its line, its review (votes, approval, publication) and its history; a reader's notices. The
version's files (its PDF, a deck's PPTX) are memos.views.downloads.

A user who may not see a version gets a 404 for its page, its files and every action on it
(services.access). While its vote is open the ballots are sealed: everyone sees the turnout and their own
vote, nobody a choice, a count or a rationale (memos.services.review.ballot says who sees what).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

from memos.models import ArtefactVersion, AuditEvent, Notice, Vote
from memos.services import review
from memos.services.access import visible_versions
from memos.services.accounts import Roles
from memos.services.printing import PAGE, artefact_context
from memos.services.runs import may_retry
from memos.services.surfaces import RENDER_PDF, Place, files_of, version_page_of
from memos.services.versions import diff, previous_of
from memos.views.users import user_of


def version_for(user: User, version_id: int) -> ArtefactVersion:
    found: ArtefactVersion = get_object_or_404(
        visible_versions(user).select_related("brief__company", "brief__owner", "run__created_by"),
        pk=version_id,
    )
    return found


def review_context(user: User, version: ArtefactVersion, *, printing: bool = False) -> dict[str, Any]:
    """What the status badge, the review panel and the history need, as ``user`` may see them: the part of
    the page that a vote changes. The version's sockets render it after every change
    (memos.views.version_socket), one after another in their process, so it stays cheap: no artefact, no diff,
    no register."""
    shown = review.ballot(user, version)
    started_it = user.pk in {*version.analyst_ids, version.run.created_by_id}
    return {
        "version": version,
        "history": review.history(user, version, shown),
        "tally": shown.tally,
        "sealed": shown.sealed,
        "shows_choices": shown.shows_choices,
        "sees_refusals": shown.sees_refusals,
        "votes": shown.votes,
        "own_vote": shown.own_vote,
        "motion": shown.motion,
        "may_vote": shown.may_vote and not printing,
        "not_voting": "" if printing else shown.not_voting,
        "may_review": review.has_role(user, Roles.REVIEWER) and not started_it and not printing,
        "started_it": started_it,
        "printing": printing,
        "choices": [c for c in Vote.Choice.choices if c[0] != Vote.Choice.RECUSED],
    }


def page_context(user: User, version: ArtefactVersion) -> dict[str, Any]:
    previous = previous_of(version)
    if previous is not None and not visible_versions(user).filter(pk=previous.pk).exists():
        previous = None  # an executive compares only with what they may read
    readable = list(visible_versions(user).filter(brief_id=version.brief_id).order_by("kind", "-number"))
    context = (
        review_context(user, version)
        | artefact_context(version)
        | {
            "previous": previous,
            "diff": diff(previous, version) if previous is not None else [],
            # The version's own line, then the brief's other lines, named with their kind ("memo v2").
            "line": [other for other in readable if other.kind == version.kind],
            "others": [other for other in readable if other.kind != version.kind],
        }
    )
    sealed = version_page_of(version).sealed
    return (
        context
        | {"scores_sealed": sealed(user, version) if sealed is not None else ""}
        | partial_context(user, version)
        | {"panels": panels(user, version, previous), "version_downloads": downloads(version)}
    )


def partial_context(user: User, version: ArtefactVersion) -> dict[str, Any]:
    """What the partial banner offers ``user``: its analyst accepts it (once, while it is in review and
    evaluated) or retries what failed; everyone sees who accepted it."""
    if not version.partial:
        return {}
    accepted = version.audit.filter(action=AuditEvent.Action.PARTIAL_ACCEPTED).select_related("actor").first()
    analyst = user.pk == version.brief.owner_id and review.has_role(user, Roles.ANALYST)
    return {
        "accepted_partial": accepted,
        "may_accept_partial": analyst
        and accepted is None
        and version.evaluated
        and version.status == ArtefactVersion.Status.READY_FOR_REVIEW,
        "may_retry": may_retry(user, version.run),
    }


@dataclass(frozen=True)
class Download:
    label: str
    url: str


def downloads(version: ArtefactVersion) -> list[Download]:
    """The version's frozen files as its header links them (its workflow's declaration; no database read)."""
    return [
        Download(
            file.label,
            reverse("version_pdf", args=[version.pk])
            if file.name == RENDER_PDF
            else reverse("version_file", args=[version.pk, file.name]),
        )
        for file in files_of(version).files
    ]


def panels(
    user: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[Place, list[Shown]]:
    """The reader's panels of the version's workflow (memos.services.surfaces.Panel), by where they go."""
    shown: dict[Place, list[Shown]] = {"top": [], "above": [], "below": []}
    for panel in version_page_of(version).panels:
        context = panel.context(user, version, previous)
        if context is not None:
            shown[panel.place].append(Shown(panel.template, context))
    return shown


@dataclass(frozen=True)
class Shown:
    """A panel as the page includes it: its template, with its own context."""

    template: str
    context: dict[str, Any]


@require_safe
@login_required
def version_page(request: HttpRequest, version_id: int) -> HttpResponse:
    user = user_of(request)
    version = version_for(user, version_id)
    _mark_read(user, version)
    context = page_context(user, version)
    context |= version_page_of(version).query(request.GET, context)
    return render(request, PAGE, context)


def refused(request: HttpRequest, version: ArtefactVersion, reason: str) -> HttpResponse:
    """The version's page again, saying why the action was refused; nothing changed."""
    context = page_context(user_of(request), version) | {"refusal": reason}
    return render(request, PAGE, context, status=409)


@require_safe
@login_required
def notices_page(request: HttpRequest) -> HttpResponse:
    user = user_of(request)
    notices: QuerySet[Notice] = Notice.objects.filter(
        recipient=user, version__in=visible_versions(user)
    ).select_related("version__brief__company")[:200]
    return render(request, "memos/versions/notices.html", {"notices": notices})


def _mark_read(user: User, version: ArtefactVersion) -> None:
    Notice.objects.filter(recipient=user, version=version, read_at__isnull=True).update(
        read_at=timezone.now()
    )
