"""The admin's review pages (memos/admin/review.py): versions, the audit trail, votes, motions and notices are
listed, filtered and searched by superusers, read-only; the review policy is its one row, edited with its
bounds checked; a staff member given every permission sees none of it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.db import transaction
from django.test import Client

import memos.admin.review  # noqa: F401  # registers the pages (memos/admin/__init__.py imports it too)
from memos.models import ArtefactVersion, ReviewPolicy
from memos.pipeline.workflows import Artefact
from memos.services import review
from memos.services.accounts import Roles
from memos.services.versions import freeze
from tests.memos.factories import company, run_for

pytestmark = pytest.mark.django_db

PAGES = ("artefactversion", "auditevent", "vote", "motion", "notice", "reviewpolicy")
POLICY = "/admin/memos/reviewpolicy/1/change/"


@pytest.fixture
def version(alice: User, bob: User) -> ArtefactVersion:
    """v1 of alice's brief, frozen as a finished run freezes it, with bob's (the committee's) vote."""
    run = run_for(alice, company())
    with transaction.atomic():
        frozen = freeze(
            run=run,
            artefact=Artefact(
                kind="memo",
                title="AAPL memo: Is the services mix durable?",
                content={"headline_thesis": "Services keep growing."},
                sections={"Headline thesis": "Services keep growing."},
                evaluated=True,
                score=6.0,
                score_label="calibrated J+",
            ),
        )
    review.cast_vote(
        version=frozen, member=bob, choice="reject", rationale="The thesis leans on one quarter."
    )
    return frozen


@pytest.fixture
def superuser_client(client: Client, admin_user: User) -> Client:
    review.policy()
    client.force_login(admin_user)
    return client


def test_a_superuser_lists_filters_and_searches_the_review(
    superuser_client: Client, version: ArtefactVersion
) -> None:
    index = superuser_client.get("/admin/").content.decode()
    for page in PAGES:
        assert f"/admin/memos/{page}/" in index
        assert superuser_client.get(f"/admin/memos/{page}/").status_code == 200, page
    listing = superuser_client.get("/admin/memos/artefactversion/?status=ready_for_review&q=AAPL").content
    assert b"calibrated J+ 6" in listing and version.content_hash[:12].encode() in listing
    assert b"0 results" in superuser_client.get("/admin/memos/artefactversion/?status=published").content
    trail = superuser_client.get("/admin/memos/auditevent/?action=voted").content.decode()
    assert "bob" in trail and "1 result" in trail
    assert "the desk" in superuser_client.get("/admin/memos/auditevent/?action=frozen").content.decode()
    assert b"The thesis leans" in superuser_client.get("/admin/memos/vote/?q=quarter").content
    assert b"icon-yes" in superuser_client.get("/admin/memos/motion/?closed_at__isempty=1").content  # open
    assert b"0 results" in superuser_client.get("/admin/memos/motion/?closed_at__isempty=0").content
    notices = superuser_client.get("/admin/memos/notice/?event=vote_needed").content
    assert b"bob" in notices


def test_a_staff_member_given_every_permission_sees_none_of_it(
    client: Client, version: ArtefactVersion
) -> None:
    dora = User.objects.create_user(username="dora", password="dora-secret-pass", is_staff=True)
    dora.user_permissions.set(Permission.objects.filter(content_type__app_label="memos"))
    client.force_login(dora)
    index = client.get("/admin/").content.decode()
    for page in PAGES:
        assert f"/admin/memos/{page}/" not in index
        assert client.get(f"/admin/memos/{page}/").status_code == 403, page
    assert client.post(POLICY, {"min_votes": "1", "approval_share": "0", "_save": "Save"}).status_code == 403
    assert ReviewPolicy.objects.get(pk=1).min_votes == 3


def test_the_policy_is_edited_within_its_bounds(superuser_client: Client, bob: User) -> None:
    assert review.has_role(bob, Roles.COMMITTEE)  # the committee's one member
    for min_votes, share, problem in (
        ("0", "0.5", "At least one vote"),
        ("-1", "0.5", "greater than or equal to 0"),
        ("2", "1", "up to but not including 1"),
        ("2", "1.5", "up to but not including 1"),
        ("2", "-0.1", "from 0 up to"),
        ("2", "nan", "Enter a number"),
    ):
        page = superuser_client.post(
            POLICY, {"min_votes": min_votes, "approval_share": share, "_save": "Save"}
        )
        assert page.status_code == 200 and problem in page.content.decode(), (min_votes, share)
    assert (ReviewPolicy.objects.get(pk=1).min_votes, ReviewPolicy.objects.get(pk=1).approval_share) == (
        3,
        0.5,
    )

    saved = superuser_client.post(
        POLICY, {"min_votes": "2", "approval_share": "0.6", "_save": "Save"}, follow=True
    )
    assert saved.status_code == 200
    assert (ReviewPolicy.objects.get(pk=1).min_votes, ReviewPolicy.objects.get(pk=1).approval_share) == (
        2,
        0.6,
    )
    # The committee has one member: the admin is told no version can be approved until it grows.
    assert "fewer than the 2 votes the quorum needs" in saved.content.decode()


def test_the_policy_row_is_never_added_beside_or_deleted(superuser_client: Client) -> None:
    assert superuser_client.get("/admin/memos/reviewpolicy/add/").status_code == 403
    assert superuser_client.post("/admin/memos/reviewpolicy/1/delete/", {"post": "yes"}).status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": ["1"], "post": "yes"}
    assert superuser_client.post("/admin/memos/reviewpolicy/", bulk).status_code == 200
    assert list(ReviewPolicy.objects.values_list("pk", flat=True)) == [1]
