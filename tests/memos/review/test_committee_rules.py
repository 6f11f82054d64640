"""The committee's rules under pressure (issue 16, section 3): sealed ballots, who may vote, who counts, the
policy a motion opened under, the threshold, and the constraints the database keeps.

The cast: alice the analyst owns the brief; bob, carol and dave sit on the committee; rev reviews (rita, who
both sits on the committee and reviews, joins where a test needs her). The policy: at least two non-recused
votes, approvals from more than half of the non-recused members.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from memos.models import ArtefactVersion, AuditEvent, Brief, Motion, Notice, ReviewPolicy, Vote
from memos.services import review
from memos.services.accounts import Roles, ensure_groups
from memos.services.review import ReviewRefused
from memos.services.versions import close_motion
from tests.memos.review.support import frozen, member, page_of, seen_by, tally_of

pytestmark = pytest.mark.django_db

Status = ArtefactVersion.Status
Action = AuditEvent.Action


@pytest.fixture
def cast(alice: User, bob: User, charlie: User, admin_user: User) -> dict[str, User]:
    ReviewPolicy.objects.update_or_create(pk=1, defaults={"min_votes": 2, "approval_share": 0.5})
    return {
        "alice": alice,
        "bob": bob,
        "carol": member("carol", Roles.COMMITTEE),
        "dave": member("dave", Roles.COMMITTEE),
        "rev": member("rev", Roles.REVIEWER),
        "charlie": charlie,
        "admin": admin_user,
    }


@pytest.fixture
def version(cast: dict[str, User]) -> ArtefactVersion:
    return frozen(cast["alice"])


def vote(who: User, version: ArtefactVersion, choice: str, rationale: str = "") -> Vote:
    return review.cast_vote(version=version, member=who, choice=choice, rationale=rationale)


def refusal(attempt: Any) -> str:
    with pytest.raises(ReviewRefused) as refused:
        attempt()
    return str(refused.value)


# --- keyword-only services (item 10)


def test_the_review_services_that_change_state_take_keyword_arguments_only(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    for service in (review.cast_vote, review.approve, review.request_changes, review.publish):
        kinds = {parameter.kind for parameter in inspect.signature(service).parameters.values()}
        assert kinds == {inspect.Parameter.KEYWORD_ONLY}, service.__name__
    positional: Callable[..., object] = review.cast_vote
    with pytest.raises(TypeError):
        positional(cast["bob"], version, "approve")
    assert not Vote.objects.exists()


# --- who may vote (item 2)


def test_a_vote_from_the_briefs_owner_is_refused(cast: dict[str, User]) -> None:
    alice = cast["alice"]
    alice.groups.add(ensure_groups()[Roles.COMMITTEE])  # an analyst who also sits on the committee
    version = frozen(alice)
    message = refusal(lambda: vote(alice, version, "approve"))
    assert "you own this brief" in message
    assert not Vote.objects.exists()
    assert not version.audit.filter(actor=alice).exists()
    # Their page offers no vote, and says why.
    page = page_of(alice, version)
    assert 'id="vote-form"' not in page and "you do not vote on it" in page


def test_an_admin_s_change_of_the_brief_rewrites_no_version_nor_lets_its_analyst_vote_on_it(
    cast: dict[str, User],
) -> None:
    alice, carol = cast["alice"], cast["carol"]
    alice.groups.add(ensure_groups()[Roles.COMMITTEE])
    version = frozen(alice)
    # An admin hands the brief to carol and rewrites its question (the admin's brief form does both).
    Brief.objects.filter(pk=version.brief_id).update(owner=carol, question="Should we sell everything?")
    version = ArtefactVersion.objects.get(pk=version.pk)
    # The version shows what was asked when it was frozen, and who asked.
    assert version.question == "Is the services mix durable?"
    assert version.brief_as_frozen["owner"] == "alice"
    page = page_of(cast["bob"], version)
    assert "Is the services mix durable?" in page and "Should we sell everything?" not in page
    # The analyst who made it cannot vote on it now that another owns the brief; nor can the new owner.
    assert "you own this brief" in refusal(lambda: vote(alice, version, "approve"))
    assert "you own this brief" in refusal(lambda: vote(carol, version, "approve"))
    assert not Vote.objects.exists()


def test_a_vote_from_the_member_who_started_the_run_is_refused(cast: dict[str, User]) -> None:
    sam = member("sam", Roles.ANALYST, Roles.COMMITTEE)
    version = frozen(cast["alice"], started_by=sam)
    assert "you started this version's run" in refusal(lambda: vote(sam, version, "approve"))
    assert "you started this version's run" in refusal(lambda: vote(sam, version, "recused", "It is mine."))
    assert not Vote.objects.exists()


def test_an_admin_on_the_committee_does_not_vote_for_they_read_every_ballot_in_the_admin(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    admin = cast["admin"]
    admin.groups.add(ensure_groups()[Roles.COMMITTEE])
    assert "admins read every ballot in the admin" in refusal(lambda: vote(admin, version, "approve"))
    assert review.tally(version).members == 3  # bob, carol and dave: the admin is not counted
    assert "You read every ballot in the admin" in page_of(admin, version)


# --- sealed ballots (item 1)


def test_while_the_vote_is_open_nobody_sees_a_choice_or_a_rationale_only_the_turnout_and_their_own_vote(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["bob"], version, "approve", "Margins hold across the cycle.")
    vote(cast["carol"], version, "reject", "Too early to size it.")
    vote(cast["dave"], version, "recused", "I hold the stock personally.")
    secrets = {"bob": "Margins hold", "carol": "Too early", "dave": "I hold the stock"}
    for name in ("bob", "carol", "dave", "rev", "alice", "admin"):
        seen = seen_by(cast[name], version)
        others = [secret for who, secret in secrets.items() if who != name]  # one's own is in one's form
        for where, html in seen.items():
            for secret in others:
                assert secret not in html, (name, where, secret)
        for where in ("page tally", "socket tally"):
            tally = seen[where].lower()
            assert "2 of 3 members have voted; 1 recused" in tally, (name, where)
            assert not re.search(r"approve|reject|abstain", tally), (name, where, tally)
        for where in ("page history", "socket history"):
            assert not re.search(r"\((approve|reject|abstain|recused)\)", seen[where]), (name, where)
    # Each member sees their own vote, and only their own.
    assert "Change your vote (now: approve)" in page_of(cast["bob"], version)
    assert "Change your vote (now: reject)" in page_of(cast["carol"], version)
    assert "Too early to size it." in page_of(cast["carol"], version)  # their own rationale, in their form


def test_a_recusal_stands_a_member_who_declared_a_conflict_cannot_turn_it_into_a_vote(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["dave"], version, "recused", "I hold the stock personally.")
    for choice in ("approve", "reject", "abstain"):
        attempt = lambda c=choice: vote(cast["dave"], version, c, "On reflection.")  # noqa: E731
        assert "a recusal stands" in refusal(attempt)
    assert Vote.objects.get(version=version, member=cast["dave"]).choice == "recused"
    assert "0 of 3 members have voted; 1 recused" in tally_of(page_of(cast["bob"], version))
    # The recusal itself may still be reworded; a member who voted may still recuse.
    vote(cast["dave"], version, "recused", "My family holds the stock.")
    vote(cast["bob"], version, "approve", "Margins hold.")
    vote(cast["bob"], version, "recused", "I advised on the deal.")
    assert Vote.objects.filter(version=version, choice="recused").count() == 2


def test_a_member_who_abstains_learns_nothing_of_the_others_and_may_still_change_their_vote(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["bob"], version, "approve", "Margins hold across the cycle.")
    vote(cast["carol"], version, "reject", "Too early to size it.")
    vote(cast["dave"], version, "abstain", "Waiting to see how the others lean.")
    seen = seen_by(cast["dave"], version)
    for html in seen.values():
        assert "Margins hold" not in html and "Too early" not in html
        assert not re.search(r"1</strong> (approve|reject)", html)
    # Knowing nothing more, the change is theirs to make (and recorded).
    vote(cast["dave"], version, "approve")
    assert version.audit.filter(action=Action.VOTE_CHANGED, actor=cast["dave"]).exists()


def test_once_the_vote_closes_every_choice_and_rationale_shows(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["bob"], version, "approve", "Margins hold across the cycle.")
    vote(cast["carol"], version, "approve")
    vote(cast["dave"], version, "reject", "Too early to size it.")
    review.approve(version=version, reviewer=cast["rev"])
    for name in ("bob", "dave", "rev", "alice", "admin"):
        tally = seen_by(cast[name], version)["page tally"]
        assert "<strong>2</strong> approve" in tally and "<strong>1</strong> reject" in tally, name
        assert "Margins hold across the cycle." in tally and "Too early to size it." in tally, name
        assert "carol</strong>: approve" in tally, name


def test_a_refused_approval_says_whether_the_quorum_and_threshold_are_met_without_the_choices(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["bob"], version, "approve")
    assert "the quorum is not met: 1 of the 2" in refusal(
        lambda: review.approve(version=version, reviewer=cast["rev"])
    )
    vote(cast["carol"], version, "reject", "Too early to size it.")
    vote(cast["dave"], version, "abstain", "Not my sector.")
    message = refusal(lambda: review.approve(version=version, reviewer=cast["rev"]))
    assert "the quorum is met" in message and "the threshold is not" in message
    assert not re.search(r"\d+ (approval|reject|abstain)", message), message
    # The audit trail keeps the same words, and shows them once the vote has closed.
    refused = version.audit.filter(action=Action.APPROVAL_REFUSED).order_by("id").last()
    assert refused is not None and "threshold is not" in refused.detail["reason"]
    assert "threshold is not" not in seen_by(cast["bob"], version)["page history"]


def test_repeated_votes_and_asks_cannot_flood_the_audit_trail(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    bob = cast["bob"]
    for _ in range(5):  # the same vote again changes nothing
        vote(bob, version, "approve")
    assert version.audit.filter(actor=bob, action=Action.VOTED).count() == 1
    assert not version.audit.filter(actor=bob, action=Action.VOTE_CHANGED).exists()
    for n in range(review.MAX_VOTE_CHANGES):
        vote(bob, version, "reject" if n % 2 == 0 else "approve", f"Second thoughts, round {n}.")
    assert "your last vote stands" in refusal(lambda: vote(bob, version, "abstain", "One more."))
    assert version.audit.filter(actor=bob, action=Action.VOTE_CHANGED).count() == review.MAX_VOTE_CHANGES
    # A reviewer asking again and again, with nothing counted since, leaves one refusal in the trail.
    for _ in range(5):
        refusal(lambda: review.approve(version=version, reviewer=cast["rev"]))
    assert version.audit.filter(action=Action.APPROVAL_REFUSED).count() == 1
    vote(cast["carol"], version, "reject", "Too early.")  # something new counted: the next ask is recorded
    refusal(lambda: review.approve(version=version, reviewer=cast["rev"]))
    assert version.audit.filter(action=Action.APPROVAL_REFUSED).count() == 2


def test_a_reviewer_on_the_committee_has_their_vote_locked_once_they_asked_for_approval(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    rita = member("rita", Roles.COMMITTEE, Roles.REVIEWER)
    vote(rita, version, "abstain", "Not sure yet.")
    vote(cast["bob"], version, "approve")
    refusal(lambda: review.approve(version=version, reviewer=rita))  # the threshold is not met: she knows
    message = refusal(lambda: vote(rita, version, "approve"))
    assert "your vote is locked" in message and "asked for the approval" in message
    assert Vote.objects.get(version=version, member=rita).choice == "abstain"
    page = page_of(rita, version)
    assert 'id="vote-form"' not in page and "Your vote is locked" in page
    # A member who never voted and then asked is locked out of voting at all.
    other = frozen(cast["alice"], thesis="Services keep growing, again.")
    refusal(lambda: review.approve(version=other, reviewer=rita))
    assert "your vote is locked" in refusal(lambda: vote(rita, other, "approve"))


def test_members_do_not_see_a_refused_approval_while_the_vote_is_open(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    """Seen beside the turnout, "approval refused" at a met quorum would tell a member that the threshold is
    short: the row shows to reviewers only, until the vote closes."""
    vote(cast["bob"], version, "approve")
    vote(cast["carol"], version, "reject", "Too early to size it.")
    refusal(lambda: review.approve(version=version, reviewer=cast["rev"]))
    for name in ("bob", "carol", "dave"):
        assert "approval refused" not in seen_by(cast[name], version)["page history"], name
    assert "approval refused" in seen_by(cast["rev"], version)["page history"]
    review.request_changes(version=version, reviewer=cast["rev"], comment="Tie the sizing to the budget.")
    assert "approval refused" in seen_by(cast["bob"], version)["page history"]


# --- who counts, and under which policy (item 3)


@pytest.mark.parametrize("how", ["removed from the committee", "deactivated"])
def test_votes_of_a_member_who_left_the_committee_no_longer_count(
    cast: dict[str, User], version: ArtefactVersion, how: str
) -> None:
    vote(cast["bob"], version, "approve")
    vote(cast["carol"], version, "approve")
    assert review.tally(version).passed
    carol = cast["carol"]
    if how == "deactivated":
        carol.is_active = False
        carol.save(update_fields=["is_active"])
    else:
        carol.groups.remove(ensure_groups()[Roles.COMMITTEE])
    counted = review.tally(version)
    assert (counted.approve, counted.members) == (1, 2)
    assert "the quorum is not met: 1 of the 2" in refusal(
        lambda: review.approve(version=version, reviewer=cast["rev"])
    )
    assert "1 of 2 members have voted" in tally_of(page_of(cast["bob"], version))
    assert ArtefactVersion.objects.get(pk=version.pk).status == Status.READY_FOR_REVIEW


def test_an_admins_policy_change_leaves_an_open_motion_under_the_policy_it_opened_with(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    motion = Motion.objects.get(version=version)
    assert (motion.min_votes, motion.approval_share) == (2, 0.5)
    ReviewPolicy.objects.filter(pk=1).update(min_votes=1, approval_share=0.0)
    vote(cast["bob"], version, "approve")
    assert "the quorum is not met: 1 of the 2" in refusal(
        lambda: review.approve(version=version, reviewer=cast["rev"])
    )
    # The next version opens under the new policy: one approval is enough there.
    newer = frozen(cast["alice"], thesis="Services keep growing, faster.")
    assert (
        Motion.objects.get(version=newer).min_votes,
        Motion.objects.get(version=newer).approval_share,
    ) == (
        1,
        0.0,
    )
    vote(cast["bob"], newer, "approve")
    assert review.approve(version=newer, reviewer=cast["rev"]).status == Status.APPROVED
    opened = newer.audit.get(action=Action.MOTION_OPENED)
    assert opened.detail == {"min_votes": 1, "approval_share": 0.0}


# --- the threshold, and the constraints the database keeps (item 4)


def test_an_approval_above_the_quorum_but_below_the_threshold_is_refused_and_recorded(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    vote(cast["bob"], version, "approve")
    vote(cast["carol"], version, "reject", "Too early to size it.")
    vote(cast["dave"], version, "abstain", "Not my sector.")
    counted = review.tally(version)
    assert counted.quorum_met and counted.approvals_needed == 2 and not counted.passed
    assert "threshold is not" in refusal(lambda: review.approve(version=version, reviewer=cast["rev"]))
    assert ArtefactVersion.objects.get(pk=version.pk).status == Status.READY_FOR_REVIEW
    assert Motion.objects.get(version=version).is_open
    assert version.audit.filter(action=Action.APPROVAL_REFUSED, actor=cast["rev"]).count() == 1
    # One more approval crosses it.
    vote(cast["dave"], version, "approve")
    assert review.approve(version=version, reviewer=cast["rev"]).status == Status.APPROVED


def test_the_database_refuses_a_second_vote_by_one_member_on_one_version(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    Vote.objects.create(version=version, member=cast["bob"], choice="approve")
    with pytest.raises(IntegrityError, match="one_vote_per_member_per_version"), transaction.atomic():
        Vote.objects.create(
            version=version, member=cast["bob"], choice="reject", rationale="Changed my mind."
        )
    assert list(Vote.objects.values_list("choice", flat=True)) == ["approve"]


def test_the_database_refuses_a_second_notice_to_one_person_of_one_event_on_one_version(
    cast: dict[str, User], version: ArtefactVersion
) -> None:
    first = Notice.objects.get(version=version, recipient=cast["bob"], event=Notice.Event.VOTE_NEEDED)
    with pytest.raises(IntegrityError, match="one_notice_per_person_version_event"), transaction.atomic():
        Notice.objects.create(
            recipient=cast["bob"],
            version=version,
            event=Notice.Event.VOTE_NEEDED,
            subject="Again",
            body="Again",
            link=first.link,
        )
    assert Notice.objects.filter(version=version, recipient=cast["bob"]).count() == 1


def test_the_tally_box_is_drawn_only_around_something_to_read(cast: dict[str, User]) -> None:
    """An empty bordered box under the review note read as a missing tally: no box without a turnout or a
    vote to show, and the box while the vote is open and once it closed with votes."""

    def boxed(version: ArtefactVersion) -> bool:
        return "is-empty" not in tally_of(page_of(cast["bob"], version)).split(">", 1)[0]

    assert not boxed(frozen(cast["alice"], evaluated=False))  # no verdict, no vote
    quiet = frozen(cast["alice"], thesis="Nobody voted on this one.")
    assert boxed(quiet)  # open: the turnout
    close_motion(version=quiet, because="changes requested")
    assert not boxed(quiet)  # closed with no vote cast
    voted = frozen(cast["alice"], thesis="Two members voted on this one.")
    vote(cast["bob"], voted, "approve")
    vote(cast["carol"], voted, "reject", "Too early to size it.")
    close_motion(version=voted, because="changes requested")
    assert boxed(voted)
    assert "Too early to size it." in tally_of(page_of(cast["bob"], voted))
