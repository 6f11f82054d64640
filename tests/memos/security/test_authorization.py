"""Who gets what from every URL the site serves: one row per URL pattern, read from Django's resolver, saying
what anonymous, each group, the run's owner, another analyst, an outsider and a superuser get.

A URL pattern without a row fails ``test_every_url_has_a_row``. Each row is requested with GET by every actor
and, for URLs that change something, with POST (CSRF checks on, a valid token sent, so a refusal is the
authorization's, not the CSRF check's). A refused request changes no row in the database and no job in the
queue, and never shows the run's content.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import django_rq
import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.http import HttpResponseBase
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from pytest_django import DjangoDbBlocker
from rq import Queue
from rq.job import Job
from rq.registry import FailedJobRegistry
from rq.worker import Worker

import memos.admin.review  # noqa: F401  # the review's admin pages (memos/admin/__init__.py imports it too)
from agents.deck.gates import Scored
from memos.models import (
    AgentStep,
    AuditEvent,
    Brief,
    Calibration,
    Company,
    DataLoad,
    FalsifierWatch,
    GoldScore,
    MemoSchedule,
    Motion,
    Notice,
    PromptVersion,
    RefineSchedule,
    RubricVersion,
    Run,
    SourceDocument,
)
from memos.pipeline.workflows import Artefact
from memos.services import review
from memos.services.accounts import Roles, ensure_groups
from memos.services.governance import seed_from_files
from memos.services.versions import freeze
from tests import db_snapshot
from tests.agents.deck.samples import clean_measure, cleared_r1, sample_deck
from tests.memos.factories import company, ledger_row, revenue_fact, run_for
from tests.memos.screen.samples import sample_screen_content

pytestmark = pytest.mark.django_db

# The run's question: no refused response may contain it.
MARKER = "Is the services mix durable?"

# --- outcomes


@dataclass(frozen=True)
class Outcome:
    status: int
    to: str = ""  # a redirect's Location, as a regular expression matched in full ({placeholders} filled)
    refused: bool = False  # then the request must change nothing and show nothing of the run
    unchanged: bool = False  # then the request must change nothing (it may show what the actor may read)

    def __str__(self) -> str:
        return f"{self.status} -> {self.to}" if self.to else str(self.status)


OK = Outcome(200)
LOGIN = Outcome(302, r"/accounts/login/\?next=.+", refused=True)
ADMIN_LOGIN = Outcome(302, r"/admin/login/\?next=.+", refused=True)
FORBIDDEN = Outcome(403, refused=True)
NOT_FOUND = Outcome(404, refused=True)
NOT_ALLOWED = Outcome(405, refused=True)
CONFLICT = Outcome(409, refused=True)
# The admin's logout, asked by someone who is not staff: sent to the admin's index (and from there to its
# login), still signed in to the product.
ADMIN_BOUNCE = Outcome(302, "/admin/", refused=True)
# A review action its rules refuse (memos.services.review) to someone who may read the version: its page
# again with the reason, and nothing changed.
REFUSED_ON_PAGE = Outcome(409, unchanged=True)
# A reviewer's approval below the quorum: refused with the reason, the refusal recorded in the audit trail.
APPROVAL_REFUSED = Outcome(409)


def redirect(to: str) -> Outcome:
    return Outcome(302, to)


HOME = redirect("/")
ADMIN_INDEX = redirect("/admin/")
NEW_RUN = redirect(r"/runs/[0-9a-f-]+/")
# A page that fails for the superuser; each one is named in the table with why.

# --- actors, in the order they make their requests (the superuser last: its POSTs may delete rows)

ACTORS = ("anonymous", "owner", "analyst", "committee", "reviewer", "executive", "outsider", "admin")
Access = dict[str, Outcome]


def access(
    *,
    anonymous: Outcome,
    owner: Outcome,
    analyst: Outcome,
    committee: Outcome,
    reviewer: Outcome,
    executive: Outcome,
    outsider: Outcome,
    admin: Outcome,
) -> Access:
    return {
        "anonymous": anonymous,
        "owner": owner,
        "analyst": analyst,
        "committee": committee,
        "reviewer": reviewer,
        "executive": executive,
        "outsider": outsider,
        "admin": admin,
    }


def everyone(outcome: Outcome) -> Access:
    return access(
        anonymous=outcome,
        owner=outcome,
        analyst=outcome,
        committee=outcome,
        reviewer=outcome,
        executive=outcome,
        outsider=outcome,
        admin=outcome,
    )


def signed_in(outcome: Outcome) -> Access:
    """Any signed-in user; a visitor is sent to log in."""
    return everyone(outcome) | {"anonymous": LOGIN}


def superuser(outcome: Outcome) -> Access:
    """The Django admin: nobody in the product's groups is staff, so everyone else is sent to its login."""
    return everyone(ADMIN_LOGIN) | {"admin": outcome}


def rq_superuser(outcome: Outcome) -> Access:
    """django-rq's dashboard (memos.admin.queues.SuperuserQueueAdmin): a visitor is sent to the admin's login,
    a signed-in user who is not a superuser is refused."""
    return everyone(FORBIDDEN) | {"anonymous": ADMIN_LOGIN, "admin": outcome}


# A run and its steps: its owner, the committee, reviewers and superusers; for anyone else it does not exist.
RUN_READERS = access(
    anonymous=LOGIN,
    owner=OK,
    analyst=NOT_FOUND,
    committee=OK,
    reviewer=OK,
    executive=NOT_FOUND,
    outsider=NOT_FOUND,
    admin=OK,
)


# A version not yet published: its brief's analyst, the committee, reviewers and superusers; executives read
# published versions only; for anyone else it does not exist.
VERSION_READERS = RUN_READERS


def review_action(allowed: str, done: Outcome) -> Access:
    """A review action on the version: ``allowed`` (the committee or the reviewer) gets ``done``; whoever else
    may read the version is refused on its page with the reason; for anyone else it does not exist."""
    return {
        actor: (done if actor == allowed else REFUSED_ON_PAGE) if outcome == OK else outcome
        for actor, outcome in VERSION_READERS.items()
    }


def run_starters(started: Outcome) -> Access:
    """Analysts (and superusers) start runs; the committee, reviewers and executives only read."""
    return access(
        anonymous=LOGIN,
        owner=started,
        analyst=started,
        committee=FORBIDDEN,
        reviewer=FORBIDDEN,
        executive=FORBIDDEN,
        outsider=FORBIDDEN,
        admin=started,
    )


# --- the table


@dataclass(frozen=True)
class Row:
    """One URL pattern: a real URL for it (``{placeholders}`` filled from the world), who gets what on GET,
    and, for a URL that changes something, on POST with ``data``."""

    path: str
    get: Access
    post: Access | None = None
    data: dict[str, str] = field(default_factory=dict)


def delete_selected(obj: str) -> dict[str, str]:
    return {"action": "delete_selected", "_selected_action": obj, "post": "yes"}


SAVE = {"_save": "Save"}
CONFIRM_DELETE = {"post": "yes"}
RQ = "/admin/django_rq/dashboard"
A_BRIEF = {"ticker": "AAPL", "question": "What would change the thesis?", "profile": "quick"}
RQ_SELECTED = {"action": "delete", "job_ids": "{job}", "_selected_action": "{job}"}
# A superuser's own gold score of the deck version, one whole score per dimension of R2's composite.
R2_COMPOSITE = ("actionability", "executive_altitude", "visual_digestibility", "clean_concise_story")
R1_ONLY = ("thesis_clarity", "coverage_depth", "narrative_flow", "visual_baseline")
A_GOLD_SCORE = {"version": "{deck_version}", "rubric": "deck_r2"} | {
    f"score_{key}": "4" for key in (*R2_COMPOSITE, "metric_traceability")
}

TABLE: dict[str, Row] = {
    # The product's pages
    "": Row("/", everyone(OK)),
    "briefs/new/": Row("/briefs/new/", run_starters(OK), run_starters(NEW_RUN), A_BRIEF),
    "runs/<uuid:run_id>/": Row("/runs/{run}/", RUN_READERS),
    "runs/<uuid:run_id>/steps/<int:step_id>/": Row("/runs/{run}/steps/{step}/", RUN_READERS),
    "runs/<uuid:run_id>/ledger/": Row("/runs/{run}/ledger/", RUN_READERS),
    # Its analyst (or a superuser) re-runs a memo's failed evaluation; this run is queued, so even they are
    # refused with the reason (409), and whoever may only read it is refused outright.
    "runs/<uuid:run_id>/rerun-evaluation/": Row(
        "/runs/{run}/rerun-evaluation/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=CONFLICT,
            analyst=NOT_FOUND,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=NOT_FOUND,
            outsider=NOT_FOUND,
            admin=CONFLICT,
        ),
    ),
    # Its brief's analyst retries a failed or partial run (memos.services.runs.retry_run); this run is queued,
    # so whoever may read it is refused on its page with the reason, and for anyone else it does not exist.
    "runs/<uuid:run_id>/retry/": Row(
        "/runs/{run}/retry/",
        everyone(NOT_ALLOWED),
        {actor: REFUSED_ON_PAGE if outcome == OK else outcome for actor, outcome in RUN_READERS.items()},
    ),
    # A superuser adopts a deck run's brief-specific rubric anchors (memos/views/rubric_proposals.py); this
    # step holds no proposal, so even they are refused with the reason (409); nobody else may.
    "runs/<uuid:run_id>/steps/<int:step_id>/adopt-rubric/": Row(
        "/runs/{run}/steps/{step}/adopt-rubric/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=FORBIDDEN,
            analyst=NOT_FOUND,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=NOT_FOUND,
            outsider=NOT_FOUND,
            admin=CONFLICT,
        ),
    ),
    # A deck brief's refinement schedule (memos/views/schedules.py): its analyst or a superuser sets it. This
    # brief's latest version is a memo, so even they are refused, on that version's page with the reason;
    # whoever may only read the brief is refused outright.
    "briefs/<int:brief_id>/schedule/": Row(
        "/briefs/{brief}/schedule/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=REFUSED_ON_PAGE,
            analyst=NOT_FOUND,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=NOT_FOUND,
            outsider=NOT_FOUND,
            admin=REFUSED_ON_PAGE,
        ),
        {"cycles": "1", "next": "/"},
    ),
    # A memo brief's weekly memo: its analyst or a superuser sets it (this brief's latest version is a memo);
    # whoever may only read the brief is refused outright.
    "briefs/<int:brief_id>/memo-schedule/": Row(
        "/briefs/{brief}/memo-schedule/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=redirect("/versions/{version}/"),
            analyst=NOT_FOUND,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=NOT_FOUND,
            outsider=NOT_FOUND,
            admin=redirect("/versions/{version}/"),
        ),
        {"enabled": "on", "weekday": "0", "at": "07:00"},
    ),
    # Starting a refinement cycle now: the same people as the schedule; this brief has no deck version to
    # refine, so even they are refused on its page with the reason.
    "briefs/<int:brief_id>/refine-now/": Row(
        "/briefs/{brief}/refine-now/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=REFUSED_ON_PAGE,
            analyst=NOT_FOUND,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=NOT_FOUND,
            outsider=NOT_FOUND,
            admin=REFUSED_ON_PAGE,
        ),
    ),
    # Starting the desk's week now: an analyst's or an admin's; this world has no week owner (DESK_WEEK_OWNER,
    # "analyst"), so even they are refused on the home page with the reason, and nothing starts.
    "week/run-now/": Row(
        "/week/run-now/",
        everyone(NOT_ALLOWED),
        access(
            anonymous=LOGIN,
            owner=REFUSED_ON_PAGE,
            analyst=REFUSED_ON_PAGE,
            committee=FORBIDDEN,
            reviewer=FORBIDDEN,
            executive=FORBIDDEN,
            outsider=FORBIDDEN,
            admin=REFUSED_ON_PAGE,
        ),
    ),
    # Frozen versions and their review (memos/views/versions.py, memos/views/review.py): each action is a POST
    # by the role it belongs to; the version's other readers are refused with the reason on its page.
    "versions/<int:version_id>/": Row("/versions/{version}/", VERSION_READERS),
    "versions/<int:version_id>/pdf/": Row("/versions/{version}/pdf/", VERSION_READERS),
    # Any file a version's workflow declares, by its name (memos/views/downloads.py): the version's readers.
    "versions/<int:version_id>/files/<str:name>": Row(
        "/versions/{deck_version}/files/deck.pptx", VERSION_READERS
    ),
    # A screen version's standalone report: whoever may read the version's page.
    "versions/<int:version_id>/report.html": Row("/versions/{screen_version}/report.html", VERSION_READERS),
    # The screen's strategy and its criteria by week: every signed-in reader, each seeing the versions it may.
    "screen/strategy/": Row("/screen/strategy/", signed_in(OK)),
    # A deck version's slide images and downloads, and the slides of a deck run's step (memos/views/decks.py):
    # whoever may read the version's page, or the step's document, and nobody else.
    "versions/<int:version_id>/slides/<int:number>.png": Row(
        "/versions/{deck_version}/slides/1.png", VERSION_READERS
    ),
    "versions/<int:version_id>/deck.pdf": Row("/versions/{deck_version}/deck.pdf", VERSION_READERS),
    "versions/<int:version_id>/deck.pptx": Row("/versions/{deck_version}/deck.pptx", VERSION_READERS),
    "versions/<int:version_id>/deck.json": Row("/versions/{deck_version}/deck.json", VERSION_READERS),
    # The judge's scores: a committee member who has not scored the deck yet is refused them (issue 31, 4).
    "versions/<int:version_id>/scores.json": Row(
        "/versions/{deck_version}/scores.json", VERSION_READERS | {"committee": FORBIDDEN}
    ),
    "runs/<uuid:run_id>/steps/<int:step_id>/slides/<int:number>.png": Row(
        "/runs/{deck_run}/steps/{deck_step}/slides/1.png", RUN_READERS
    ),
    "versions/<int:version_id>/vote/": Row(
        "/versions/{version}/vote/",
        everyone(NOT_ALLOWED),
        review_action("committee", redirect("/versions/{version}/")),
        {"choice": "approve"},
    ),
    # A committee member's scores of a deck for the judge's calibration
    # (memos.pipeline.deck.desk.gold_scores).
    "versions/<int:version_id>/score/": Row(
        "/versions/{deck_version}/score/",
        everyone(NOT_ALLOWED),
        review_action("committee", redirect("/versions/{deck_version}/")),
        {f"score_{key}": "3" for key in (*R2_COMPOSITE, "metric_traceability", *R1_ONLY)},
    ),
    "versions/<int:version_id>/recuse/": Row(
        "/versions/{version}/recuse/",
        everyone(NOT_ALLOWED),
        review_action("committee", redirect("/versions/{version}/")),
        {"conflict": "I hold the stock personally."},
    ),
    # One approving vote of the three the default policy needs: the reviewer's approval is refused, and the
    # refusal is recorded.
    "versions/<int:version_id>/approve/": Row(
        "/versions/{version}/approve/", everyone(NOT_ALLOWED), review_action("reviewer", APPROVAL_REFUSED)
    ),
    "versions/<int:version_id>/request-changes/": Row(
        "/versions/{version}/request-changes/",
        everyone(NOT_ALLOWED),
        review_action("reviewer", redirect("/versions/{version}/")),
        {"comment": "Tie the sizing to the risk budget."},
    ),
    # Only an approved version is published: this one is not, so even its reviewer is refused, with why.
    "versions/<int:version_id>/publish/": Row(
        "/versions/{version}/publish/", everyone(NOT_ALLOWED), review_action("reviewer", REFUSED_ON_PAGE)
    ),
    # Its brief's analyst accepts a partial version (memos.services.review.accept_partial); this one is whole,
    # so even they are refused on its page with the reason.
    "versions/<int:version_id>/accept-partial/": Row(
        "/versions/{version}/accept-partial/",
        everyone(NOT_ALLOWED),
        review_action("owner", REFUSED_ON_PAGE),
    ),
    "notices/": Row("/notices/", signed_in(OK)),
    # Evidence is the shared fact store (public filings and news), read by every signed-in user.
    "facts/": Row("/facts/", signed_in(OK)),
    "facts/<evidence:fact_id>/": Row("/facts/{fact}/", signed_in(OK)),
    "sources/<evidence:doc_id>/": Row("/sources/{doc}/", signed_in(OK)),
    # Django's auth views
    "accounts/login/": Row("/accounts/login/", everyone(OK)),
    "accounts/logout/": Row("/accounts/logout/", everyone(NOT_ALLOWED), everyone(HOME)),
    "accounts/password_change/": Row("/accounts/password_change/", signed_in(OK), signed_in(OK)),
    "accounts/password_change/done/": Row("/accounts/password_change/done/", signed_in(OK)),
    "accounts/password_reset/": Row("/accounts/password_reset/", everyone(OK)),
    "accounts/password_reset/done/": Row("/accounts/password_reset/done/", everyone(OK)),
    "accounts/reset/<uidb64>/<token>/": Row("/accounts/reset/{uid}/not-a-token/", everyone(OK)),
    "accounts/reset/done/": Row("/accounts/reset/done/", everyone(OK)),
    # The admin site
    "admin/": Row("/admin/", superuser(OK)),
    "admin/login/": Row("/admin/login/", everyone(OK) | {"admin": ADMIN_INDEX}),
    "admin/logout/": Row(
        "/admin/logout/",
        everyone(ADMIN_BOUNCE) | {"admin": NOT_ALLOWED},
        everyone(ADMIN_BOUNCE) | {"admin": HOME},
    ),
    "admin/password_change/": Row("/admin/password_change/", superuser(OK), superuser(OK)),
    "admin/password_change/done/": Row("/admin/password_change/done/", superuser(OK)),
    "admin/autocomplete/": Row("/admin/autocomplete/", superuser(FORBIDDEN)),
    "admin/jsi18n/": Row("/admin/jsi18n/", superuser(OK)),
    "admin/r/<path:content_type_id>/<path:object_id>/": Row(
        "/admin/r/{run_type}/{run}/", superuser(NOT_FOUND)
    ),
    "admin/(?P<app_label>auth|axes|memos|django_rq)/$": Row("/admin/memos/", superuser(OK)),
    "admin/(?P<url>.*)$": Row("/admin/no-such-page/", superuser(NOT_FOUND)),
    # Users and groups (editable by superusers)
    "admin/auth/group/": Row(
        "/admin/auth/group/",
        superuser(OK),
        superuser(redirect("/admin/auth/group/")),
        delete_selected("{group}"),
    ),
    "admin/auth/group/add/": Row("/admin/auth/group/add/", superuser(OK), superuser(OK)),
    "admin/auth/group/<path:object_id>/history/": Row("/admin/auth/group/{group}/history/", superuser(OK)),
    "admin/auth/group/<path:object_id>/delete/": Row(
        "/admin/auth/group/{group}/delete/",
        superuser(OK),
        superuser(redirect("/admin/auth/group/")),
        CONFIRM_DELETE,
    ),
    "admin/auth/group/<path:object_id>/change/": Row(
        "/admin/auth/group/{group}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/auth/group/<path:object_id>/": Row(
        "/admin/auth/group/{group}/", superuser(redirect("/admin/auth/group/{group}/change/"))
    ),
    "admin/auth/user/<id>/password/": Row(
        "/admin/auth/user/{victim}/password/",
        superuser(OK),
        superuser(OK),
        {"password1": "", "password2": ""},
    ),
    "admin/auth/user/": Row(
        "/admin/auth/user/",
        superuser(OK),
        superuser(redirect("/admin/auth/user/")),
        delete_selected("{victim}"),
    ),
    "admin/auth/user/add/": Row("/admin/auth/user/add/", superuser(OK), superuser(OK)),
    "admin/auth/user/<path:object_id>/history/": Row("/admin/auth/user/{victim}/history/", superuser(OK)),
    "admin/auth/user/<path:object_id>/delete/": Row(
        "/admin/auth/user/{victim}/delete/",
        superuser(OK),
        superuser(redirect("/admin/auth/user/")),
        CONFIRM_DELETE,
    ),
    "admin/auth/user/<path:object_id>/change/": Row(
        "/admin/auth/user/{victim}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/auth/user/<path:object_id>/": Row(
        "/admin/auth/user/{victim}/", superuser(redirect("/admin/auth/user/{victim}/change/"))
    ),
    # django-axes' login records: lifting a lockout is the admin's (a superuser's) job
    "admin/axes/accessattempt/": Row(
        "/admin/axes/accessattempt/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessattempt/")),
        delete_selected("{attempt}"),
    ),
    "admin/axes/accessattempt/add/": Row(
        "/admin/axes/accessattempt/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/axes/accessattempt/<path:object_id>/history/": Row(
        "/admin/axes/accessattempt/{attempt}/history/", superuser(OK)
    ),
    "admin/axes/accessattempt/<path:object_id>/delete/": Row(
        "/admin/axes/accessattempt/{attempt}/delete/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessattempt/")),
        CONFIRM_DELETE,
    ),
    "admin/axes/accessattempt/<path:object_id>/change/": Row(
        "/admin/axes/accessattempt/{attempt}/change/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessattempt/")),
        SAVE,
    ),
    "admin/axes/accessattempt/<path:object_id>/": Row(
        "/admin/axes/accessattempt/{attempt}/",
        superuser(redirect("/admin/axes/accessattempt/{attempt}/change/")),
    ),
    "admin/axes/accesslog/": Row(
        "/admin/axes/accesslog/",
        superuser(OK),
        superuser(redirect("/admin/axes/accesslog/")),
        delete_selected("{access_log}"),
    ),
    "admin/axes/accesslog/add/": Row(
        "/admin/axes/accesslog/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/axes/accesslog/<path:object_id>/history/": Row(
        "/admin/axes/accesslog/{access_log}/history/", superuser(OK)
    ),
    "admin/axes/accesslog/<path:object_id>/delete/": Row(
        "/admin/axes/accesslog/{access_log}/delete/",
        superuser(OK),
        superuser(redirect("/admin/axes/accesslog/")),
        CONFIRM_DELETE,
    ),
    "admin/axes/accesslog/<path:object_id>/change/": Row(
        "/admin/axes/accesslog/{access_log}/change/",
        superuser(OK),
        superuser(redirect("/admin/axes/accesslog/")),
        SAVE,
    ),
    "admin/axes/accesslog/<path:object_id>/": Row(
        "/admin/axes/accesslog/{access_log}/",
        superuser(redirect("/admin/axes/accesslog/{access_log}/change/")),
    ),
    "admin/axes/accessfailurelog/": Row(
        "/admin/axes/accessfailurelog/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessfailurelog/")),
        delete_selected("{failure}"),
    ),
    "admin/axes/accessfailurelog/add/": Row(
        "/admin/axes/accessfailurelog/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/axes/accessfailurelog/<path:object_id>/history/": Row(
        "/admin/axes/accessfailurelog/{failure}/history/", superuser(OK)
    ),
    "admin/axes/accessfailurelog/<path:object_id>/delete/": Row(
        "/admin/axes/accessfailurelog/{failure}/delete/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessfailurelog/")),
        CONFIRM_DELETE,
    ),
    "admin/axes/accessfailurelog/<path:object_id>/change/": Row(
        "/admin/axes/accessfailurelog/{failure}/change/",
        superuser(OK),
        superuser(redirect("/admin/axes/accessfailurelog/")),
        SAVE,
    ),
    "admin/axes/accessfailurelog/<path:object_id>/": Row(
        "/admin/axes/accessfailurelog/{failure}/",
        superuser(redirect("/admin/axes/accessfailurelog/{failure}/change/")),
    ),
    # Companies and briefs: edited by superusers; a brief's run starts only through the product's service
    "admin/memos/company/": Row(
        "/admin/memos/company/",
        superuser(OK),
        superuser(redirect("/admin/memos/company/")),
        delete_selected("{spare_company}"),
    ),
    "admin/memos/company/add/": Row("/admin/memos/company/add/", superuser(OK), superuser(OK)),
    "admin/memos/company/<path:object_id>/history/": Row(
        "/admin/memos/company/{spare_company}/history/", superuser(OK)
    ),
    "admin/memos/company/<path:object_id>/delete/": Row(
        "/admin/memos/company/{spare_company}/delete/",
        superuser(OK),
        superuser(redirect("/admin/memos/company/")),
        CONFIRM_DELETE,
    ),
    "admin/memos/company/<path:object_id>/change/": Row(
        "/admin/memos/company/{spare_company}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/memos/company/<path:object_id>/": Row(
        "/admin/memos/company/{spare_company}/",
        superuser(redirect("/admin/memos/company/{spare_company}/change/")),
    ),
    "admin/memos/brief/": Row(
        "/admin/memos/brief/",
        superuser(OK),
        superuser(redirect("/admin/memos/brief/")),
        delete_selected("{spare_brief}"),
    ),
    "admin/memos/brief/add/": Row("/admin/memos/brief/add/", superuser(OK), superuser(OK)),
    "admin/memos/brief/<path:object_id>/history/": Row("/admin/memos/brief/{brief}/history/", superuser(OK)),
    "admin/memos/brief/<path:object_id>/delete/": Row(
        "/admin/memos/brief/{spare_brief}/delete/",
        superuser(OK),
        superuser(redirect("/admin/memos/brief/")),
        CONFIRM_DELETE,
    ),
    "admin/memos/brief/<path:object_id>/change/": Row(
        "/admin/memos/brief/{brief}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/memos/brief/<path:object_id>/": Row(
        "/admin/memos/brief/{brief}/", superuser(redirect("/admin/memos/brief/{brief}/change/"))
    ),
    # Runs: read, and deleted by a superuser; never added or changed in the admin
    "admin/memos/run/": Row(
        "/admin/memos/run/", superuser(OK), superuser(redirect("/admin/memos/run/")), delete_selected("{run}")
    ),
    "admin/memos/run/add/": Row("/admin/memos/run/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)),
    "admin/memos/run/<path:object_id>/history/": Row("/admin/memos/run/{run}/history/", superuser(OK)),
    "admin/memos/run/<path:object_id>/delete/": Row(
        "/admin/memos/run/{run}/delete/",
        superuser(OK),
        superuser(ADMIN_INDEX),  # no change permission on runs, so Django returns to the index
        CONFIRM_DELETE,
    ),
    "admin/memos/run/<path:object_id>/change/": Row(
        "/admin/memos/run/{run}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/run/<path:object_id>/": Row(
        "/admin/memos/run/{run}/", superuser(redirect("/admin/memos/run/{run}/change/"))
    ),
    # Evidence and the ledger: read-only even for superusers (no add, change or delete, no bulk delete)
    "admin/memos/factrecord/": Row(
        "/admin/memos/factrecord/", superuser(OK), superuser(OK), delete_selected("{fact_pk}")
    ),
    "admin/memos/factrecord/add/": Row(
        "/admin/memos/factrecord/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/factrecord/<path:object_id>/history/": Row(
        "/admin/memos/factrecord/{fact_pk}/history/", superuser(OK)
    ),
    "admin/memos/factrecord/<path:object_id>/delete/": Row(
        "/admin/memos/factrecord/{fact_pk}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/factrecord/<path:object_id>/change/": Row(
        "/admin/memos/factrecord/{fact_pk}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/factrecord/<path:object_id>/": Row(
        "/admin/memos/factrecord/{fact_pk}/", superuser(redirect("/admin/memos/factrecord/{fact_pk}/change/"))
    ),
    "admin/memos/sourcedocument/": Row(
        "/admin/memos/sourcedocument/", superuser(OK), superuser(OK), delete_selected("{doc_pk}")
    ),
    "admin/memos/sourcedocument/add/": Row(
        "/admin/memos/sourcedocument/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/sourcedocument/<path:object_id>/history/": Row(
        "/admin/memos/sourcedocument/{doc_pk}/history/", superuser(OK)
    ),
    "admin/memos/sourcedocument/<path:object_id>/delete/": Row(
        "/admin/memos/sourcedocument/{doc_pk}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/sourcedocument/<path:object_id>/change/": Row(
        "/admin/memos/sourcedocument/{doc_pk}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/sourcedocument/<path:object_id>/": Row(
        "/admin/memos/sourcedocument/{doc_pk}/",
        superuser(redirect("/admin/memos/sourcedocument/{doc_pk}/change/")),
    ),
    "admin/memos/llmcall/": Row(
        "/admin/memos/llmcall/", superuser(OK), superuser(OK), delete_selected("{llm_call}")
    ),
    "admin/memos/llmcall/add/": Row("/admin/memos/llmcall/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)),
    "admin/memos/llmcall/<path:object_id>/history/": Row(
        "/admin/memos/llmcall/{llm_call}/history/", superuser(OK)
    ),
    "admin/memos/llmcall/<path:object_id>/delete/": Row(
        "/admin/memos/llmcall/{llm_call}/delete/", superuser(FORBIDDEN), superuser(FORBIDDEN), CONFIRM_DELETE
    ),
    "admin/memos/llmcall/<path:object_id>/change/": Row(
        "/admin/memos/llmcall/{llm_call}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/llmcall/<path:object_id>/": Row(
        "/admin/memos/llmcall/{llm_call}/", superuser(redirect("/admin/memos/llmcall/{llm_call}/change/"))
    ),
    "admin/memos/dataload/": Row(
        "/admin/memos/dataload/", superuser(OK), superuser(OK), delete_selected("{data_load}")
    ),
    "admin/memos/dataload/add/": Row(
        "/admin/memos/dataload/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/dataload/<path:object_id>/history/": Row(
        "/admin/memos/dataload/{data_load}/history/", superuser(OK)
    ),
    "admin/memos/dataload/<path:object_id>/delete/": Row(
        "/admin/memos/dataload/{data_load}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/dataload/<path:object_id>/change/": Row(
        "/admin/memos/dataload/{data_load}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/dataload/<path:object_id>/": Row(
        "/admin/memos/dataload/{data_load}/", superuser(redirect("/admin/memos/dataload/{data_load}/change/"))
    ),
    # Prompt and rubric versions (memos/admin_governance.py): read, edited into a new version (a save without
    # content is refused with the form again) and activated by superusers; never added or deleted.
    "admin/memos/promptversion/": Row(
        "/admin/memos/promptversion/",
        superuser(OK),
        superuser(redirect("/admin/memos/promptversion/")),
        {"action": "activate_versions", "_selected_action": "{prompt_version}"},
    ),
    "admin/memos/promptversion/add/": Row(
        "/admin/memos/promptversion/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/promptversion/<path:object_id>/history/": Row(
        "/admin/memos/promptversion/{prompt_version}/history/", superuser(OK)
    ),
    "admin/memos/promptversion/<path:object_id>/delete/": Row(
        "/admin/memos/promptversion/{prompt_version}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/promptversion/<path:object_id>/change/": Row(
        "/admin/memos/promptversion/{prompt_version}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/memos/promptversion/<path:object_id>/": Row(
        "/admin/memos/promptversion/{prompt_version}/",
        superuser(redirect("/admin/memos/promptversion/{prompt_version}/change/")),
    ),
    "admin/memos/rubricversion/": Row(
        "/admin/memos/rubricversion/",
        superuser(OK),
        superuser(redirect("/admin/memos/rubricversion/")),
        {"action": "activate_versions", "_selected_action": "{rubric_version}"},
    ),
    "admin/memos/rubricversion/add/": Row(
        "/admin/memos/rubricversion/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/rubricversion/<path:object_id>/history/": Row(
        "/admin/memos/rubricversion/{rubric_version}/history/", superuser(OK)
    ),
    "admin/memos/rubricversion/<path:object_id>/delete/": Row(
        "/admin/memos/rubricversion/{rubric_version}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/rubricversion/<path:object_id>/change/": Row(
        "/admin/memos/rubricversion/{rubric_version}/change/", superuser(OK), superuser(OK), SAVE
    ),
    "admin/memos/rubricversion/<path:object_id>/": Row(
        "/admin/memos/rubricversion/{rubric_version}/",
        superuser(redirect("/admin/memos/rubricversion/{rubric_version}/change/")),
    ),
    # Frozen versions and their review (memos/admin/review.py): read by superusers, never added, changed or
    # deleted there (a version's content and the audit trail are frozen in the database as well).
    "admin/memos/artefactversion/": Row(
        "/admin/memos/artefactversion/", superuser(OK), superuser(OK), delete_selected("{version}")
    ),
    "admin/memos/artefactversion/add/": Row(
        "/admin/memos/artefactversion/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/artefactversion/<path:object_id>/history/": Row(
        "/admin/memos/artefactversion/{version}/history/", superuser(OK)
    ),
    "admin/memos/artefactversion/<path:object_id>/delete/": Row(
        "/admin/memos/artefactversion/{version}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/artefactversion/<path:object_id>/change/": Row(
        "/admin/memos/artefactversion/{version}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/artefactversion/<path:object_id>/": Row(
        "/admin/memos/artefactversion/{version}/",
        superuser(redirect("/admin/memos/artefactversion/{version}/change/")),
    ),
    "admin/memos/auditevent/": Row(
        "/admin/memos/auditevent/", superuser(OK), superuser(OK), delete_selected("{audit_event}")
    ),
    "admin/memos/auditevent/add/": Row(
        "/admin/memos/auditevent/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/auditevent/<path:object_id>/history/": Row(
        "/admin/memos/auditevent/{audit_event}/history/", superuser(OK)
    ),
    "admin/memos/auditevent/<path:object_id>/delete/": Row(
        "/admin/memos/auditevent/{audit_event}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/auditevent/<path:object_id>/change/": Row(
        "/admin/memos/auditevent/{audit_event}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/auditevent/<path:object_id>/": Row(
        "/admin/memos/auditevent/{audit_event}/",
        superuser(redirect("/admin/memos/auditevent/{audit_event}/change/")),
    ),
    "admin/memos/vote/": Row("/admin/memos/vote/", superuser(OK), superuser(OK), delete_selected("{vote}")),
    "admin/memos/vote/add/": Row("/admin/memos/vote/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)),
    "admin/memos/vote/<path:object_id>/history/": Row("/admin/memos/vote/{vote}/history/", superuser(OK)),
    "admin/memos/vote/<path:object_id>/delete/": Row(
        "/admin/memos/vote/{vote}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/vote/<path:object_id>/change/": Row(
        "/admin/memos/vote/{vote}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/vote/<path:object_id>/": Row(
        "/admin/memos/vote/{vote}/",
        superuser(redirect("/admin/memos/vote/{vote}/change/")),
    ),
    "admin/memos/motion/": Row(
        "/admin/memos/motion/", superuser(OK), superuser(OK), delete_selected("{motion}")
    ),
    "admin/memos/motion/add/": Row("/admin/memos/motion/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)),
    "admin/memos/motion/<path:object_id>/history/": Row(
        "/admin/memos/motion/{motion}/history/", superuser(OK)
    ),
    "admin/memos/motion/<path:object_id>/delete/": Row(
        "/admin/memos/motion/{motion}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/motion/<path:object_id>/change/": Row(
        "/admin/memos/motion/{motion}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/motion/<path:object_id>/": Row(
        "/admin/memos/motion/{motion}/",
        superuser(redirect("/admin/memos/motion/{motion}/change/")),
    ),
    "admin/memos/falsifierwatch/": Row(
        "/admin/memos/falsifierwatch/", superuser(OK), superuser(OK), delete_selected("{watch}")
    ),
    "admin/memos/falsifierwatch/add/": Row(
        "/admin/memos/falsifierwatch/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/falsifierwatch/<path:object_id>/history/": Row(
        "/admin/memos/falsifierwatch/{watch}/history/", superuser(OK)
    ),
    "admin/memos/falsifierwatch/<path:object_id>/delete/": Row(
        "/admin/memos/falsifierwatch/{watch}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/falsifierwatch/<path:object_id>/change/": Row(
        "/admin/memos/falsifierwatch/{watch}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/falsifierwatch/<path:object_id>/": Row(
        "/admin/memos/falsifierwatch/{watch}/",
        superuser(redirect("/admin/memos/falsifierwatch/{watch}/change/")),
    ),
    "admin/memos/notice/": Row(
        "/admin/memos/notice/", superuser(OK), superuser(OK), delete_selected("{notice}")
    ),
    "admin/memos/notice/add/": Row("/admin/memos/notice/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)),
    "admin/memos/notice/<path:object_id>/history/": Row(
        "/admin/memos/notice/{notice}/history/", superuser(OK)
    ),
    "admin/memos/notice/<path:object_id>/delete/": Row(
        "/admin/memos/notice/{notice}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/notice/<path:object_id>/change/": Row(
        "/admin/memos/notice/{notice}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/notice/<path:object_id>/": Row(
        "/admin/memos/notice/{notice}/",
        superuser(redirect("/admin/memos/notice/{notice}/change/")),
    ),
    # The review policy: its one row edited by superusers (a second is never added, the row never deleted).
    "admin/memos/reviewpolicy/": Row(
        "/admin/memos/reviewpolicy/", superuser(OK), superuser(OK), delete_selected("{policy}")
    ),
    "admin/memos/reviewpolicy/add/": Row(
        "/admin/memos/reviewpolicy/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/reviewpolicy/<path:object_id>/history/": Row(
        "/admin/memos/reviewpolicy/{policy}/history/", superuser(OK)
    ),
    "admin/memos/reviewpolicy/<path:object_id>/delete/": Row(
        "/admin/memos/reviewpolicy/{policy}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/reviewpolicy/<path:object_id>/change/": Row(
        "/admin/memos/reviewpolicy/{policy}/change/",
        superuser(OK),
        superuser(redirect("/admin/memos/reviewpolicy/")),
        {"min_votes": "2", "approval_share": "0.5", "_save": "Save"},
    ),
    "admin/memos/reviewpolicy/<path:object_id>/": Row(
        "/admin/memos/reviewpolicy/{policy}/",
        superuser(redirect("/admin/memos/reviewpolicy/{policy}/change/")),
    ),
    # Deck refinement schedules (memos/admin_schedules.py): set on the deck's page; here superusers read them,
    # switch them off (the list's action) or delete them; never added or edited.
    "admin/memos/refineschedule/": Row(
        "/admin/memos/refineschedule/",
        superuser(OK),
        superuser(redirect("/admin/memos/refineschedule/")),
        {"action": "switch_off", "_selected_action": "{schedule}"},
    ),
    "admin/memos/refineschedule/add/": Row(
        "/admin/memos/refineschedule/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/refineschedule/<path:object_id>/history/": Row(
        "/admin/memos/refineschedule/{schedule}/history/", superuser(OK)
    ),
    "admin/memos/refineschedule/<path:object_id>/delete/": Row(
        "/admin/memos/refineschedule/{schedule}/delete/",
        superuser(OK),
        superuser(ADMIN_INDEX),  # no change permission, so Django returns to the index
        CONFIRM_DELETE,
    ),
    "admin/memos/refineschedule/<path:object_id>/change/": Row(
        "/admin/memos/refineschedule/{schedule}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/refineschedule/<path:object_id>/": Row(
        "/admin/memos/refineschedule/{schedule}/",
        superuser(redirect("/admin/memos/refineschedule/{schedule}/change/")),
    ),
    # Weekly memo schedules (memos/admin/schedules.py): set on the memo's page; here superusers read them,
    # switch them off (the list's action, which holds against the analyst) or delete them; never added or
    # edited.
    "admin/memos/memoschedule/": Row(
        "/admin/memos/memoschedule/",
        superuser(OK),
        superuser(redirect("/admin/memos/memoschedule/")),
        {"action": "switch_off", "_selected_action": "{memo_schedule}"},
    ),
    "admin/memos/memoschedule/add/": Row(
        "/admin/memos/memoschedule/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/memoschedule/<path:object_id>/history/": Row(
        "/admin/memos/memoschedule/{memo_schedule}/history/", superuser(OK)
    ),
    "admin/memos/memoschedule/<path:object_id>/delete/": Row(
        "/admin/memos/memoschedule/{memo_schedule}/delete/",
        superuser(OK),
        superuser(ADMIN_INDEX),  # no change permission, so Django returns to the index
        CONFIRM_DELETE,
    ),
    "admin/memos/memoschedule/<path:object_id>/change/": Row(
        "/admin/memos/memoschedule/{memo_schedule}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/memoschedule/<path:object_id>/": Row(
        "/admin/memos/memoschedule/{memo_schedule}/",
        superuser(redirect("/admin/memos/memoschedule/{memo_schedule}/change/")),
    ),
    # The deck judge's calibration (memos/admin_calibration.py): superusers add and delete gold scores, never
    # edit one; calibrations are written by manage.py calibrate_judge and only read here.
    "admin/memos/goldscore/": Row(
        "/admin/memos/goldscore/",
        superuser(OK),
        superuser(redirect("/admin/memos/goldscore/")),
        delete_selected("{gold_score}"),
    ),
    "admin/memos/goldscore/add/": Row(
        "/admin/memos/goldscore/add/",
        superuser(OK),
        superuser(redirect("/admin/memos/goldscore/")),
        A_GOLD_SCORE,
    ),
    "admin/memos/goldscore/<path:object_id>/history/": Row(
        "/admin/memos/goldscore/{gold_score}/history/", superuser(OK)
    ),
    "admin/memos/goldscore/<path:object_id>/delete/": Row(
        "/admin/memos/goldscore/{gold_score}/delete/",
        superuser(OK),
        superuser(ADMIN_INDEX),  # no change permission, so Django returns to the index
        CONFIRM_DELETE,
    ),
    "admin/memos/goldscore/<path:object_id>/change/": Row(
        "/admin/memos/goldscore/{gold_score}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/goldscore/<path:object_id>/": Row(
        "/admin/memos/goldscore/{gold_score}/",
        superuser(redirect("/admin/memos/goldscore/{gold_score}/change/")),
    ),
    "admin/memos/calibration/": Row(
        "/admin/memos/calibration/", superuser(OK), superuser(OK), delete_selected("{calibration}")
    ),
    # Queues the judge's calibration on a rubric for the worker (a POST from the list's buttons).
    "admin/memos/calibration/calibrate/": Row(
        "/admin/memos/calibration/calibrate/",
        superuser(NOT_ALLOWED),
        superuser(redirect("/admin/memos/calibration/")),
        {"rubric": "deck_r2"},
    ),
    "admin/memos/calibration/add/": Row(
        "/admin/memos/calibration/add/", superuser(FORBIDDEN), superuser(FORBIDDEN)
    ),
    "admin/memos/calibration/<path:object_id>/history/": Row(
        "/admin/memos/calibration/{calibration}/history/", superuser(OK)
    ),
    "admin/memos/calibration/<path:object_id>/delete/": Row(
        "/admin/memos/calibration/{calibration}/delete/",
        superuser(FORBIDDEN),
        superuser(FORBIDDEN),
        CONFIRM_DELETE,
    ),
    "admin/memos/calibration/<path:object_id>/change/": Row(
        "/admin/memos/calibration/{calibration}/change/", superuser(OK), superuser(FORBIDDEN), SAVE
    ),
    "admin/memos/calibration/<path:object_id>/": Row(
        "/admin/memos/calibration/{calibration}/",
        superuser(redirect("/admin/memos/calibration/{calibration}/change/")),
    ),
    # django-rq's dashboard, mounted in the admin: job arguments and queue actions, superusers only. The
    # ModelAdmin's own list page shares its route ("admin/django_rq/dashboard/") with the dashboard, which
    # answers first: one row covers both patterns.
    "admin/django_rq/dashboard/stats.json/?$": Row(f"{RQ}/stats.json/", rq_superuser(OK)),
    "admin/django_rq/dashboard/stats.json/(?P<token>[\\w]+)?/?$": Row(
        f"{RQ}/stats.json/notatoken/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/": Row(f"{RQ}/", rq_superuser(OK)),
    "admin/django_rq/dashboard/queues/<int:queue_index>/": Row(f"{RQ}/queues/0/", rq_superuser(OK)),
    "admin/django_rq/dashboard/queues/<int:queue_index>/details/": Row(
        f"{RQ}/queues/0/details/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/finished/": Row(
        f"{RQ}/queues/0/finished/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/failed/": Row(
        f"{RQ}/queues/0/failed/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/failed/clear/": Row(
        f"{RQ}/queues/0/failed/clear/", rq_superuser(OK), rq_superuser(redirect(f"{RQ}/"))
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/scheduled/": Row(
        f"{RQ}/queues/0/scheduled/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/started/": Row(
        f"{RQ}/queues/0/started/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/deferred/": Row(
        f"{RQ}/queues/0/deferred/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/empty/": Row(
        f"{RQ}/queues/0/empty/", rq_superuser(OK), rq_superuser(redirect(f"{RQ}/queues/0/"))
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/requeue-all/": Row(
        f"{RQ}/queues/0/requeue-all/", rq_superuser(OK), rq_superuser(redirect(f"{RQ}/queues/0/"))
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/": Row(
        f"{RQ}/queues/0/{{job}}/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/results/<str:result_id>/": Row(
        f"{RQ}/queues/0/{{job}}/results/no-such-result/", rq_superuser(NOT_FOUND)
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/delete/": Row(
        f"{RQ}/queues/0/{{job}}/delete/", rq_superuser(OK), rq_superuser(redirect(f"{RQ}/queues/0/"))
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/requeue/": Row(
        f"{RQ}/queues/0/{{failed_job}}/requeue/",
        rq_superuser(OK),
        rq_superuser(redirect(f"{RQ}/queues/0/{{failed_job}}/")),
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/enqueue/": Row(
        f"{RQ}/queues/0/{{job}}/enqueue/", rq_superuser(OK), rq_superuser(redirect(f"{RQ}/queues/0/{{job}}/"))
    ),
    "admin/django_rq/dashboard/queues/<int:queue_index>/<str:job_id>/stop/": Row(
        f"{RQ}/queues/0/{{job}}/stop/",
        rq_superuser(NOT_ALLOWED),
        rq_superuser(redirect(f"{RQ}/queues/0/{{job}}/")),
    ),
    "admin/django_rq/dashboard/queues/confirm-action/<int:queue_index>/": Row(
        f"{RQ}/queues/confirm-action/0/",
        rq_superuser(redirect(f"{RQ}/queues/0/")),
        rq_superuser(OK),
        RQ_SELECTED,
    ),
    "admin/django_rq/dashboard/queues/actions/<int:queue_index>/": Row(
        f"{RQ}/queues/actions/0/",
        rq_superuser(redirect(f"{RQ}/queues/0/")),
        rq_superuser(redirect(f"{RQ}/queues/0/")),
        RQ_SELECTED,
    ),
    "admin/django_rq/dashboard/workers/<int:queue_index>/": Row(f"{RQ}/workers/0/", rq_superuser(OK)),
    "admin/django_rq/dashboard/workers/<int:queue_index>/<str:key>/": Row(
        f"{RQ}/workers/0/{{worker}}/", rq_superuser(OK)
    ),
    "admin/django_rq/dashboard/cron-schedulers/<int:connection_index>/<str:scheduler_name>/": Row(
        f"{RQ}/cron-schedulers/0/no-such-scheduler/", rq_superuser(NOT_FOUND)
    ),
    (
        "admin/django_rq/dashboard/cron-schedulers/<int:connection_index>/<str:scheduler_name>/"
        "jobs/<path:cron_job_name>/"
    ): Row(f"{RQ}/cron-schedulers/0/no-such-scheduler/jobs/no-such-job/", rq_superuser(NOT_FOUND)),
    # django-rq's Dashboard model has no table: memos/admin/queues.py serves none of its object pages (they
    # could only fail), and adding one is refused.
    "admin/django_rq/dashboard/add/": Row(f"{RQ}/add/", rq_superuser(FORBIDDEN), rq_superuser(FORBIDDEN)),
}


# --- the resolver


def url_routes(patterns: list[URLPattern | URLResolver] | None = None, prefix: str = "") -> Iterator[str]:
    """Every URL pattern the site serves (included ones and the admin's too), as its full route, joined as
    Django joins a match's ``route`` (an included regex loses its leading ``^``)."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        own = str(pattern.pattern)
        route = prefix + own.removeprefix("^") if prefix else own
        if isinstance(pattern, URLResolver):
            yield from url_routes(pattern.url_patterns, route)
        else:
            yield route


def test_every_url_has_a_row() -> None:
    served = set(url_routes())
    missing = sorted(served - TABLE.keys())
    stale = sorted(TABLE.keys() - served)
    assert not missing, "URL patterns without a row in TABLE (say who may use them):\n" + "\n".join(missing)
    assert not stale, "rows for URL patterns the site no longer serves:\n" + "\n".join(stale)


def test_the_resolver_walk_sees_the_product_the_auth_views_the_admin_and_the_rq_dashboard() -> None:
    routes = set(url_routes())
    assert {"briefs/new/", "accounts/logout/", "admin/memos/run/<path:object_id>/change/"} <= routes
    assert "admin/django_rq/dashboard/queues/<int:queue_index>/empty/" in routes
    assert len(routes) == len(TABLE) >= 120


# --- the world every row is requested in


def member(username: str, group: Group | None) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-secret-pass")
    if group is not None:
        user.groups.add(group)
    return user


def deck_values(owner: User, of: Company) -> dict[str, str]:
    """A finished deck run of a brief of its own (so the memo version's review is untouched), its deck step
    and the version it froze: three slides with bullets, a table and a chart."""
    brief = Brief.objects.create(company=of, question="Which slides does the board need?", owner=owner)
    run = Run.objects.create(brief=brief, created_by=owner, status=Run.Status.DONE, workflow="deck")
    deck = sample_deck(3)
    # Past the entry bar and scored on R2, so the committee may score it as a gold example.
    scored = Scored(scores=dict.fromkeys(R2_COMPOSITE, 4), composite=4.0, measured=clean_measure(deck))
    content = cleared_r1(deck, composite=3.6).model_copy(update={"r2": scored}).model_dump(mode="json")
    step = AgentStep.objects.create(
        run=run, stage="deck", key="deck", kind="deck", title="The deck", status="done", output=content
    )
    with transaction.atomic():
        version = freeze(
            run=run,
            artefact=Artefact(
                kind="deck",
                title="AAPL deck: hold",
                content=content,
                sections={f"Slide {s.number}: {s.section}": s.title for s in deck.slides},
                evaluated=False,
            ),
        )
    return {"deck_run": str(run.pk), "deck_step": str(step.pk), "deck_version": str(version.pk)}


def screen_values(owner: User) -> dict[str, str]:
    """A finished screen run of a watchlist brief and the version it froze (its report among its files)."""
    brief = Brief.objects.create(
        symbols=["XOM", "DUK"], question="Which symbols moved on their own?", owner=owner
    )
    run = Run.objects.create(brief=brief, created_by=owner, status=Run.Status.DONE, workflow="screen")
    with transaction.atomic():
        version = freeze(
            run=run,
            artefact=Artefact(
                kind="screen",
                title="Sector screen, week ending 2015-08-21",
                content=sample_screen_content(),
                sections={"Flags": "XOM and DUK"},
                evaluated=False,
            ),
        )
    return {"screen_version": str(version.pk)}


def calibration_values(scorer: User, deck_version: str) -> dict[str, str]:
    """A person's gold score of the deck version, and a calibration of the active R2 rubric."""
    gold = GoldScore.objects.create(
        version_id=int(deck_version),
        rubric="deck_r2",
        scores={"actionability": 4, "executive_altitude": 3},
        scored_by=scorer,
    )
    calibration = Calibration.objects.create(
        rubric_version=RubricVersion.objects.get(name="deck_r2", is_active=True),
        scorer_model="fake-judge",
        examples=3,
        pairs=15,
        within_one=0.9,
        by_dimension={"actionability": {"mean_abs_diff": 0.5, "within_one": 0.9, "pairs": 3}},
        passed=True,
    )
    return {"gold_score": str(gold.pk), "calibration": str(calibration.pk)}


@dataclass
class World:
    clients: dict[str, Client]
    values: dict[str, str]
    queue: Queue
    job: Job

    def url(self, template: str) -> str:
        return template.format(**self.values)


def csrf_client(user: User | None) -> Client:
    """A browser with CSRF checks on and a CSRF cookie; each POST sends its token back (see request())."""
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    client.cookies[settings.CSRF_COOKIE_NAME] = "csrf" + "a" * 28
    return client


@dataclass(frozen=True)
class WorldRows:
    """The world's rows (tests/db_snapshot.py), the ids the URL templates name, and who the actors are."""

    rows: db_snapshot.Snapshot
    values: dict[str, str]
    users: dict[str, int]  # actor: user id


def build_world_rows() -> tuple[dict[str, str], dict[str, int]]:
    """The rows every URL is requested against: (the URL templates' values, the actors' user ids)."""
    groups = ensure_groups()
    users = {
        "owner": member("alice", groups[Roles.ANALYST]),
        "analyst": member("dave", groups[Roles.ANALYST]),
        "committee": member("bob", groups[Roles.COMMITTEE]),
        "reviewer": member("rita", groups[Roles.REVIEWER]),
        "executive": member("erin", groups[Roles.EXECUTIVE]),
        "outsider": member("charlie", None),
        "admin": User.objects.create_superuser(username="root", password="root-secret-pass"),
    }
    victim = member("victor", None)  # what the superuser's deletes of users act on
    apple = company()
    spare = company("MSFT", "Microsoft Corp.", 789019)
    fact = revenue_fact(apple)
    document = SourceDocument.objects.create(
        doc_id="news:1", kind=SourceDocument.Kind.NEWS, title="A headline", url="https://example.org/1"
    )
    run = run_for(users["owner"], apple)
    assert run.brief.question == MARKER
    step = AgentStep.objects.create(
        run=run, stage="evidence", key="evidence", kind="evidence", title="Evidence"
    )
    # What the superuser's deletes act on: a company and a brief nothing depends on.
    spare_brief = Brief.objects.create(company=apple, question="A brief with no run", owner=users["owner"])
    ledger = ledger_row(None)
    load = DataLoad.objects.create(data_version="c" * 64, source="data/snapshot")
    seed_from_files()  # the prompt and rubric versions the admin's pages show and activate
    prompt_version = PromptVersion.objects.get(name="evaluator", is_active=True)
    rubric_version = RubricVersion.objects.get(name="memo_j", is_active=True)
    # A finished run of the same brief froze its memo as v1 (a motion opens; the committee and reviewers get
    # notices); one approving vote of the three the default review policy needs. (Another run than the one the
    # superuser's deletes act on: a version PROTECTs its run.)
    policy = review.policy()
    finished = Run.objects.create(brief=run.brief, created_by=users["owner"], status=Run.Status.DONE)
    with transaction.atomic():
        version = freeze(
            run=finished,
            artefact=Artefact(
                kind="memo",
                title=f"AAPL memo: {MARKER}",
                content={"headline_thesis": "Services keep growing."},
                sections={"Headline thesis": "Services keep growing.", "Risk budget": "Small."},
                evaluated=True,
                score=6.0,
                score_label="calibrated J+",
                cited=(fact.fact_id,),
            ),
        )
    vote = review.cast_vote(version=version, member=users["committee"], choice="approve")
    # A refinement schedule for the admin's pages (the product's form refuses this memo brief one).
    schedule = RefineSchedule.objects.create(
        brief=run.brief, set_by=users["owner"], set_at=version.created_at
    )
    memo_schedule = MemoSchedule.objects.create(
        brief=run.brief, set_by=users["owner"], set_at=version.created_at
    )
    watch = FalsifierWatch.objects.create(
        version=version,
        brief=version.brief,
        company=apple,
        number=1,
        text="Revenue growth turns negative.",
        metric="revenue_growth_yoy",
        condition="turns_negative",
        baseline_fact_id=fact.fact_id,
        baseline_value=fact.value,
        baseline_period_end=fact.period_end,
        baseline_fiscal_period=fact.fiscal_period,
        unit=fact.unit,
    )
    login_record: dict[str, Any] = {"user_agent": "test", "ip_address": "127.0.0.1", "username": "alice"}
    attempt = AccessAttempt.objects.create(**login_record, get_data="", post_data="", failures_since_start=1)
    access_log = AccessLog.objects.create(**login_record)
    failure = AccessFailureLog.objects.create(**login_record)
    values = (
        {
            "run": str(run.pk),
            "step": str(step.pk),
            "fact": fact.fact_id,
            "fact_pk": str(fact.pk),
            "doc": document.doc_id,
            "doc_pk": str(document.pk),
            "brief": str(run.brief_id),
            "spare_brief": str(spare_brief.pk),
            "spare_company": str(spare.pk),
            "llm_call": str(ledger.pk),
            "data_load": str(load.pk),
            "version": str(version.pk),
            "audit_event": str(AuditEvent.objects.get(version=version, action=AuditEvent.Action.FROZEN).pk),
            "vote": str(vote.pk),
            "motion": str(Motion.objects.get(version=version).pk),
            "watch": str(watch.pk),
            "schedule": str(schedule.pk),
            "memo_schedule": str(memo_schedule.pk),
            "notice": str(Notice.objects.get(version=version, recipient=users["committee"]).pk),
            "policy": str(policy.pk),
            "prompt_version": str(prompt_version.pk),
            "rubric_version": str(rubric_version.pk),
            "group": str(groups[Roles.EXECUTIVE].pk),
            "victim": str(victim.pk),
            "attempt": str(attempt.pk),
            "access_log": str(access_log.pk),
            "failure": str(failure.pk),
            "run_type": str(ContentType.objects.get_for_model(Run).pk),
            "uid": urlsafe_base64_encode(force_bytes(users["owner"].pk)),
        }
        | deck_values(users["owner"], apple)
        | screen_values(users["owner"])
    )
    values |= calibration_values(users["owner"], values["deck_version"])
    return values, {actor: user.pk for actor, user in users.items()}


@pytest.fixture(scope="module")
def world_rows(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> WorldRows:
    """The world's rows, built once for the module (three versions frozen and rendered: about two seconds)
    and put back for each test. Built in a transaction that is rolled back, as each test's own transaction
    is: nothing is committed, so no hook that waits for a commit (a notice's e-mail, a live event) runs."""
    with django_db_blocker.unblock(), transaction.atomic():
        values, users = build_world_rows()
        rows = db_snapshot.take()  # inside the transaction: its rows as this test's would see them
        transaction.set_rollback(True)
    return WorldRows(rows, values, users)


@pytest.fixture
def world(world_rows: WorldRows, redis_url: str) -> Iterator[World]:
    # The module's rows, in this test's transaction (rolled back after it, as a row it changes is).
    db_snapshot.restore(world_rows.rows)
    users = {actor: User.objects.get(pk=pk) for actor, pk in world_rows.users.items()}
    # Jobs and a worker in Redis, which no transaction rolls back: made for each test, removed after it.
    queue = Queue("default", connection=django_rq.get_connection("default"))
    job = queue.enqueue("os.getpid", description="a job the dashboard could delete")
    failed_job = queue.enqueue("os.getpid", description="a job that failed")
    queue.remove(failed_job.id)
    FailedJobRegistry(queue=queue).add(failed_job, ttl=600, exc_string="it failed")
    worker = Worker([queue], connection=queue.connection, name=f"authz-{uuid4().hex}")
    worker.register_birth()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    values = world_rows.values | {"job": job.id, "failed_job": failed_job.id, "worker": worker.key}
    clients = {"anonymous": csrf_client(None)} | {actor: csrf_client(user) for actor, user in users.items()}
    yield World(clients, values, queue, job)
    worker.register_death()  # type: ignore[no-untyped-call]
    failed = FailedJobRegistry(queue=queue)
    for job_id in [job.id, failed_job.id, *queue.job_ids, *failed.get_job_ids()]:
        queue.remove(job_id)
        failed.remove(job_id)
        if Job.exists(job_id, connection=queue.connection):
            Job.fetch(job_id, connection=queue.connection).delete()
    # The rollback after this test brings back the content types from before the restore.
    ContentType.objects.clear_cache()


def database_state() -> list[tuple[str, str]]:
    """A fingerprint of every row of every table, in one query: a refused request must leave it as it was."""
    tables = sorted(
        model._meta.db_table for model in apps.get_models() if model._meta.managed and not model._meta.proxy
    )
    sql = " UNION ALL ".join(
        f"SELECT %s, (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {quoted} t)"
        for quoted in map(connection.ops.quote_name, tables)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, tables)
        return list(cursor.fetchall())


def queue_state(world: World) -> tuple[list[str], list[str], bool]:
    failed = FailedJobRegistry(queue=world.queue)
    return (
        sorted(world.queue.job_ids),
        sorted(failed.get_job_ids()),
        Job.exists(world.job.id, connection=world.queue.connection),
    )


def outcome_of(response: HttpResponseBase) -> Outcome:
    return Outcome(response.status_code, response.get("Location", "") if response.status_code == 302 else "")


def matches(expected: Outcome, got: Outcome, world: World) -> bool:
    if expected.status != got.status:
        return False
    return not expected.to or re.fullmatch(world.url(expected.to), got.to) is not None


def request(world: World, actor: str, method: str, row: Row) -> tuple[HttpResponseBase, bool]:
    """Make one request; for a POST, also say whether it left the database and the queue as they were."""
    client = world.clients[actor]
    path = world.url(row.path)
    before = (database_state(), queue_state(world)) if method == "POST" else None
    # The test's transaction must outlive a page that fails on a database error (a 500 in the table).
    savepoint = transaction.savepoint()
    if method == "GET":
        response = client.get(path)
    else:
        response = client.post(
            path,
            {name: world.url(value) for name, value in row.data.items()},
            headers={"X-CSRFToken": client.cookies[settings.CSRF_COOKIE_NAME].value},
        )
        # A valid token was sent: a 403 here is the authorization's answer, never the CSRF check's.
        assert b"CSRF verification failed" not in response.content, f"POST {path} as {actor}: CSRF refused"
    if response.status_code == 500:
        transaction.savepoint_rollback(savepoint)
    else:
        transaction.savepoint_commit(savepoint)
    return response, before is None or (database_state(), queue_state(world)) == before


@pytest.mark.parametrize("route", list(TABLE))
def test_each_actor_gets_what_the_table_says_and_a_refusal_changes_nothing(world: World, route: str) -> None:
    row = TABLE[route]
    assert resolve(world.url(row.path).split("?")[0]).route == route, f"{row.path} is not a URL of {route}"
    wrong: list[str] = []
    for method, expected_access in (("GET", row.get), ("POST", row.post)):
        if expected_access is None:
            continue
        for actor in ACTORS:
            expected = expected_access[actor]
            response, unchanged = request(world, actor, method, row)
            got = outcome_of(response)
            if not matches(expected, got, world):
                wrong.append(f"{method} {actor}: expected {expected}, got {got}")
            elif (expected.refused or expected.unchanged) and not unchanged:
                wrong.append(f"{method} {actor}: refused ({got}) but the database or the queue changed")
            elif expected.refused and MARKER.encode() in getattr(response, "content", b""):
                wrong.append(f"{method} {actor}: refused ({got}) but the page shows the run's question")
    assert not wrong, f"{route} ({row.path}):\n" + "\n".join(wrong)


# --- what the table cannot show: lists, and the rule behind the run rows


@pytest.mark.parametrize("actor", ACTORS)
def test_the_home_page_lists_the_run_only_to_those_who_may_open_it(world: World, actor: str) -> None:
    """The home page lists runs in the analyst's part only: to the run's analyst and to an admin. The
    committee and reviewers, who may open it, find it through the versions that await them instead."""
    listed = MARKER.encode() in world.clients[actor].get("/").content
    assert listed == (actor in ("owner", "admin"))
    assert not listed or RUN_READERS[actor] == OK


def test_an_analyst_moved_to_the_executive_group_no_longer_sees_the_runs_they_started(world: World) -> None:
    alice = User.objects.get(username="alice")
    alice.groups.set([ensure_groups()[Roles.EXECUTIVE]])
    client = world.clients["owner"]
    assert client.get(world.url("/runs/{run}/")).status_code == 404
    assert client.get(world.url("/runs/{run}/steps/{step}/")).status_code == 404
    assert MARKER.encode() not in client.get("/").content


def test_an_unknown_run_is_a_404_even_for_a_superuser(world: World) -> None:
    assert world.clients["admin"].get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert world.clients["admin"].get(world.url("/runs/{run}/steps/999999/")).status_code == 404


def test_the_database_fingerprint_notices_a_changed_row(world: World) -> None:
    before = database_state()
    SourceDocument.objects.filter(doc_id=world.values["doc"]).update(title="A changed headline")
    assert database_state() != before
