"""The review of a frozen version: the committee votes, a reviewer approves or requests changes, a reviewer
publishes to the executives. Every transition is checked here, by code, and recorded in the audit trail.

Who may do what:
- a committee member votes on a version with an open motion (approve, reject or abstain; reject and
  abstain say why) or declares a conflict and recuses; one vote per member per version (a constraint), a
  changed vote replaces the old one and the change is recorded. The brief's analyst and whoever started the
  version's run never vote on it, even when they sit on the committee, nor does an admin (superusers read
  every ballot in the Django admin, which shows the database as it is);
- a reviewer approves only when the quorum and threshold are met, never on a brief they started, and
  requests changes with a comment (the motion closes, the analyst hears of it);
- a reviewer publishes an approved version; the previously published version of its line (the brief's
  memos, or its decks) is superseded.
Each of these is a person's request through a page: nothing a model writes reaches them (a run only
freezes versions and opens motions).

Who counts, under which rules: the votes of the version's committee as it stands now (active users in the
committee group, its analyst and its run's starter aside; a member removed from the group or deactivated
takes their vote out of the count), under the policy the motion pinned when it opened (quorum ``min_votes``
non-recused votes, approvals from more than ``approval_share`` of the non-recused members), never the
admin's live policy.

Sealed ballots. While a motion is open nobody (members, reviewers, the analyst, admins on the desk's pages)
is shown who voted what, the count of any choice or a rationale: only the turnout ("2 of 3 members have
voted; 1 recused") and their own vote, which a member may still change. Choices and rationales show once the
motion closes. Whether the quorum and threshold are met is the code's answer to a reviewer who asks for the
approval: a refusal says which is not met, never the choices. Two leaks are closed with it:
- a reviewer who also sits on the committee learns from that answer whether the threshold is met, so their
  own vote is locked once they have asked (``asked_for_approval``; a trigger holds it too, migration 0013);
- a refused approval is shown to the members only once the motion closes: beside the turnout, "refused" at a
  met quorum would tell them that the threshold is short.
Why sealed rather than the issue's alternative ("once a member has seen the others' votes, their vote is
locked"): that alternative still shows the votes, so a member who abstains sees them all and, locked or not,
the others keep voting with that knowledge spread; and it punishes looking (a member who opens the page to
check their own vote loses the right to change it). Sealing removes what there is to learn, keeps every
member's right to change their mind until the vote closes, and locks only the one person whose role makes
them learn (the reviewer on the committee who asked).

Every status change is a conditional UPDATE from the status it expects (memos.services.versions.move_status),
made with the version's row locked: two movers (a publication and a newer version's freeze) never overwrite
each other.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memos.live.events import send_version_changed
from memos.models import ArtefactVersion, AuditEvent, Motion, Notice, ReviewPolicy, Vote
from memos.services import notifications
from memos.services.accounts import Roles, has_role
from memos.services.errors import ServiceError
from memos.services.versions import close_motion, move_status, open_vote, record

__all__ = [
    "RATIONALE_CHARS",
    "Ballot",
    "ReviewRefused",
    "Tally",
    "approve",
    "ballot",
    "cast_vote",
    "has_role",
    "history",
    "policy",
    "publish",
    "request_changes",
    "tally",
]

Status = ArtefactVersion.Status
Action = AuditEvent.Action
# A member's changes of their vote on one version: each is an audit row, so they are bounded (issue 31: the
# audit trail could be flooded).
MAX_VOTE_CHANGES = 10
VOTE_ACTIONS = (Action.VOTED, Action.VOTE_CHANGED, Action.RECUSED)
Choice = Vote.Choice
RATIONALE_CHARS = 2000


class ReviewRefused(ServiceError):
    """A review action that the rules do not allow now; the message says which rule."""


def policy() -> ReviewPolicy:
    """The admin's live policy: what a motion pins when it opens."""
    return ReviewPolicy.current()


@dataclass(frozen=True)
class Tally:
    approve: int
    reject: int
    abstain: int
    recused: int
    members: int  # the committee members who may vote on it now
    min_votes: int
    approval_share: float

    @property
    def eligible(self) -> int:
        """Members who count toward the threshold: everyone but the recused."""
        return max(self.members - self.recused, 0)

    @property
    def cast(self) -> int:
        return self.approve + self.reject + self.abstain

    @property
    def approvals_needed(self) -> int:
        """More than ``approval_share`` of the eligible members, and at least one."""
        return max(math.floor(self.eligible * self.approval_share) + 1, 1)

    @property
    def quorum_met(self) -> bool:
        return self.cast >= self.min_votes

    @property
    def passed(self) -> bool:
        return self.quorum_met and self.approve >= self.approvals_needed

    @property
    def turnout(self) -> str:
        """What anyone may know while the vote is open: who has acted, not how."""
        plural = self.members != 1
        return (
            f"{self.cast} of {self.members} member{'s' if plural else ''} {'have' if plural else 'has'} "
            f"voted; {self.recused} recused"
        )

    def shortfall(self) -> str:
        """Why an approval is refused now, in the policy's words and without a count of any choice."""
        if not self.quorum_met:
            return (
                f"the quorum is not met: {self.cast} of the {self.min_votes} non-recused votes it needs "
                f"have been cast"
            )
        return (
            f"the quorum is met ({self.cast} non-recused votes cast, {self.min_votes} needed) but the "
            f"threshold is not: approvals must come from more than {self.approval_share:.0%} of the "
            f"{self.eligible} non-recused member{'s' if self.eligible != 1 else ''}; the choices stay sealed "
            "until the vote closes"
        )


def voters(version: ArtefactVersion) -> QuerySet[User]:
    """The committee that votes on ``version`` now: active committee members, its brief's analyst, its run's
    starter and admins aside."""
    return (
        User.objects.filter(is_active=True, is_superuser=False, groups__name=Roles.COMMITTEE)
        .exclude(pk__in=_starters(version))
        .distinct()
    )


def tally(version: ArtefactVersion, *, motion: Motion | None = None) -> Tally:
    """The votes of the current committee, under the policy the version's motion pinned (the live policy
    only for a motion closed before policies were pinned, and only to show it)."""
    committee = voters(version)
    counts = Counter(
        Vote.objects.filter(version=version, member__in=committee).values_list("choice", flat=True)
    )
    min_votes, approval_share = _pinned(motion or Motion.objects.filter(version=version).first())
    return Tally(
        approve=counts[Choice.APPROVE],
        reject=counts[Choice.REJECT],
        abstain=counts[Choice.ABSTAIN],
        recused=counts[Choice.RECUSED],
        members=committee.count(),
        min_votes=min_votes,
        approval_share=approval_share,
    )


def open_motion(version: ArtefactVersion) -> Motion | None:
    return Motion.objects.filter(version=version, closed_at__isnull=True).first()


def asked_for_approval(version: ArtefactVersion, user: User) -> bool:
    """``user`` asked for the version's approval and was refused: they know whether the threshold is met."""
    return AuditEvent.objects.filter(version=version, actor=user, action=Action.APPROVAL_REFUSED).exists()


@dataclass(frozen=True)
class Ballot:
    """The review panel as one person may see it now (memos.views.versions.review_context)."""

    tally: Tally
    motion: Motion | None  # the open motion, if any
    own_vote: Vote | None
    votes: list[tuple[Vote, bool]]  # every vote, and whether it counts: only once the motion closed
    reads_votes: bool  # may read the choices and rationales once the motion closed
    may_vote: bool
    not_voting: str  # why a committee member may not vote on it ("" otherwise)
    sees_refusals: bool  # refused approvals, with their reasons, in the history

    @property
    def sealed(self) -> bool:
        """The vote is open: choices, counts and rationales are hidden from everyone."""
        return self.motion is not None

    @property
    def shows_choices(self) -> bool:
        return not self.sealed and self.reads_votes


def ballot(user: User, version: ArtefactVersion) -> Ballot:
    motion = open_motion(version)
    counted = tally(version, motion=motion)
    is_member = has_role(user, Roles.COMMITTEE)
    own_vote = Vote.objects.filter(version=version, member=user).first() if is_member else None
    not_voting = ""
    if is_member and motion is not None:
        if user.is_superuser:
            not_voting = "You read every ballot in the admin, so you do not vote."
        elif user.pk in version.analyst_ids:
            not_voting = "You own this brief: you do not vote on it."
        elif user.pk == version.run.created_by_id:
            not_voting = "You started this version's run: you do not vote on it."
        elif asked_for_approval(version, user):
            not_voting = (
                "Your vote is locked: you asked for the approval of this version, and the answer told you "
                "whether its threshold is met."
            )
    reads_votes = _reads_votes(user, version, is_member)
    votes: list[tuple[Vote, bool]] = []
    if motion is None and reads_votes:
        counting = set(voters(version).values_list("pk", flat=True))
        votes = [
            (vote, vote.member_id in counting)
            for vote in version.votes.select_related("member").order_by("cast_at", "id")
        ]
    return Ballot(
        tally=counted,
        motion=motion,
        own_vote=own_vote,
        votes=votes,
        reads_votes=reads_votes,
        may_vote=is_member and motion is not None and version.evaluated and not not_voting,
        not_voting=not_voting,
        # While the vote is open: reviewers off the committee (and admins), who may ask for an approval
        # themselves and cast no vote. A member sees only their own refusals, which locked their vote.
        sees_refusals=motion is None
        or (not is_member and (user.is_superuser or has_role(user, Roles.REVIEWER))),
    )


def history(user: User, version: ArtefactVersion, shown: Ballot) -> QuerySet[AuditEvent]:
    """The version's audit trail as ``user`` may see it: refused approvals left out while they may not."""
    events = version.audit.select_related("actor").order_by("created_at", "id")
    if shown.sees_refusals:
        return events
    return events.exclude(Q(action=Action.APPROVAL_REFUSED) & ~Q(actor=user))


def cast_vote(*, version: ArtefactVersion, member: User, choice: str, rationale: str = "") -> Vote:
    """Record ``member``'s vote (or recusal) on ``version``, replacing an earlier one."""
    rationale = rationale.strip()[:RATIONALE_CHARS]
    if not has_role(member, Roles.COMMITTEE):
        raise ReviewRefused("only committee members vote")
    if choice not in Choice.values:
        raise ReviewRefused(f"{choice!r} is not a vote: approve, reject, abstain or recuse")
    if choice in Vote.NEEDS_RATIONALE and not rationale:
        what = "a recusal names the conflict" if choice == Choice.RECUSED else f"a vote to {choice} says why"
        raise ReviewRefused(f"{what}: the rationale is required")
    with transaction.atomic():
        locked = _locked(version)
        _check_voter(member, locked)
        if not locked.evaluated:
            raise ReviewRefused(
                f"{locked.label} has no evaluator's verdict: "
                "it cannot be voted on until an evaluation succeeds"
            )
        motion = open_motion(locked)
        if motion is None:
            raise ReviewRefused(f"the vote on {locked.label} is closed ({_closed_because(locked)})")
        if asked_for_approval(locked, member):
            raise ReviewRefused(
                f"your vote is locked: you asked for the approval of {locked.label}, and its answer told you "
                "whether the threshold is met"
            )
        quorum_before = tally(locked, motion=motion).quorum_met
        earlier = Vote.objects.filter(version=locked, member=member).first()
        if earlier is not None and earlier.choice == Choice.RECUSED and choice != Choice.RECUSED:
            # A declared conflict does not lapse: withdrawn into a vote, it would let a member count toward
            # the quorum and the threshold on a version they said they cannot judge.
            raise ReviewRefused(
                f"you recused yourself from {locked.label} ({earlier.rationale}): a recusal stands, so you "
                "do not vote on it"
            )
        if earlier is not None and (earlier.choice, earlier.rationale) == (choice, rationale):
            return earlier  # the same vote again changes nothing, and adds nothing to the trail
        if earlier is not None and _changes(locked, member) >= MAX_VOTE_CHANGES:
            raise ReviewRefused(
                f"you have changed your vote on {locked.label} {MAX_VOTE_CHANGES} times, the most the audit "
                "trail keeps: your last vote stands"
            )
        if earlier is None:
            vote = Vote.objects.create(version=locked, member=member, choice=choice, rationale=rationale)
            action = Action.RECUSED if choice == Choice.RECUSED else Action.VOTED
            record(locked, action, actor=member, detail={"choice": choice, "rationale": rationale})
        else:
            previous = {"choice": earlier.choice, "rationale": earlier.rationale}
            earlier.choice, earlier.rationale = choice, rationale
            earlier.save(update_fields=["choice", "rationale", "changed_at"])
            vote = earlier
            record(
                locked,
                Action.RECUSED if choice == Choice.RECUSED else Action.VOTE_CHANGED,
                actor=member,
                detail={"choice": choice, "rationale": rationale, "replaced": previous},
            )
        # The turnout is public, so its quorum may be announced; whether the threshold is met is not.
        if tally(locked, motion=motion).quorum_met and not quorum_before:
            notifications.notify(
                version=locked, event=Notice.Event.QUORUM_REACHED, recipients=reviewers_for(locked)
            )
        send_version_changed(locked.pk)
    return vote


def _changes(version: ArtefactVersion, member: User) -> int:
    return version.audit.filter(actor=member, action=Action.VOTE_CHANGED).count()


def _check_voter(member: User, version: ArtefactVersion) -> None:
    """Who never votes on this version, whatever its state: an admin, its brief's analyst, its starter."""
    if member.is_superuser:
        raise ReviewRefused(
            "admins read every ballot in the admin, so they do not vote: a member without admin rights does"
        )
    if member.pk in version.analyst_ids:
        raise ReviewRefused(f"you own this brief: its analyst does not vote on {version.label}")
    if member.pk == version.run.created_by_id:
        raise ReviewRefused(f"you started this version's run: you do not vote on {version.label}")


def approve(*, version: ArtefactVersion, reviewer: User) -> ArtefactVersion:
    """Approve for publication, or refuse saying which rule is not met (never the choices); a refusal for
    want of votes is recorded in the audit trail too (it commits, then the refusal is raised)."""
    refused = ""
    with transaction.atomic():
        locked = _locked(version)
        _check_reviewer(reviewer, locked, "approve")
        if locked.status != Status.READY_FOR_REVIEW:
            raise ReviewRefused(
                f"{locked.label} is {locked.get_status_display().lower()}, not ready for review"
            )
        if not locked.evaluated:
            raise ReviewRefused(f"{locked.label} has no evaluator's verdict: it cannot be approved")
        motion = open_motion(locked)
        if motion is None:
            raise ReviewRefused(f"the vote on {locked.label} is closed ({_closed_because(locked)})")
        counted = tally(locked, motion=motion)
        if counted.passed:
            _move(locked, expected=(Status.READY_FOR_REVIEW,), to=Status.APPROVED)
            record(locked, Action.APPROVED, actor=reviewer, detail=_tally_detail(counted))
            close_motion(version=locked, because="approved", actor=reviewer)
            others = [user for user in reviewers_for(locked) if user.pk != reviewer.pk]
            notifications.notify(
                version=locked, event=Notice.Event.APPROVED, recipients=[locked.brief.owner, *others]
            )
        else:
            refused = counted.shortfall()
            detail = {"reason": refused, "quorum_met": counted.quorum_met, "threshold_met": False}
            # The same refusal asked again, with nothing counted since, is the same answer: the trail keeps
            # it once, so a reviewer's repeated asking cannot flood it.
            last = locked.audit.filter(action=Action.APPROVAL_REFUSED, actor=reviewer).order_by("-id").first()
            turnout = (
                locked.audit.filter(action__in=VOTE_ACTIONS).order_by("-id").values_list("id", flat=True)
            )
            newest_vote = turnout.first()
            if last is None or last.detail != detail or (newest_vote is not None and newest_vote > last.pk):
                record(locked, Action.APPROVAL_REFUSED, actor=reviewer, detail=detail)
        send_version_changed(locked.pk)
    if refused:
        raise ReviewRefused(f"{locked.label} cannot be approved yet: {refused}")
    return locked


def request_changes(*, version: ArtefactVersion, reviewer: User, comment: str) -> ArtefactVersion:
    comment = comment.strip()[:RATIONALE_CHARS]
    if not comment:
        raise ReviewRefused("say what should change: a request for changes needs a comment")
    with transaction.atomic():
        locked = _locked(version)
        _check_reviewer(reviewer, locked, "request changes to")
        if locked.status not in (Status.READY_FOR_REVIEW, Status.APPROVED):
            raise ReviewRefused(
                f"{locked.label} is {locked.get_status_display().lower()}: nothing to send back"
            )
        _move(locked, expected=(Status.READY_FOR_REVIEW, Status.APPROVED), to=Status.CHANGES_REQUESTED)
        record(locked, Action.CHANGES_REQUESTED, actor=reviewer, detail={"comment": comment})
        close_motion(version=locked, because="changes requested", actor=reviewer)
        notifications.notify(
            version=locked,
            event=Notice.Event.CHANGES_REQUESTED,
            recipients=[locked.brief.owner],
            note=comment,
        )
        send_version_changed(locked.pk)
    return locked


def publish(*, version: ArtefactVersion, reviewer: User) -> ArtefactVersion:
    with transaction.atomic():
        locked = _locked(version)
        _check_reviewer(reviewer, locked, "publish")
        if locked.status != Status.APPROVED:
            raise ReviewRefused(
                f"{locked.label} is {locked.get_status_display().lower()}: "
                "only approved versions are published"
            )
        for older in ArtefactVersion.objects.filter(
            brief_id=locked.brief_id, kind=locked.kind, status=Status.PUBLISHED
        ).exclude(pk=locked.pk):
            # Still published when its row is reached, or another publication superseded it already.
            if move_status(older, expected=(Status.PUBLISHED,), to=Status.SUPERSEDED):
                record(older, Action.SUPERSEDED, actor=reviewer, detail={"by": locked.label})
                send_version_changed(older.pk)
        _move(locked, expected=(Status.APPROVED,), to=Status.PUBLISHED, published_at=timezone.now())
        record(locked, Action.PUBLISHED, actor=reviewer)
        audience = [
            *notifications.members(Roles.EXECUTIVE),
            locked.brief.owner,
            *notifications.members(Roles.COMMITTEE),
        ]
        notifications.notify(version=locked, event=Notice.Event.PUBLISHED, recipients=audience)
        send_version_changed(locked.pk)
    return locked


def reviewers_for(version: ArtefactVersion) -> list[User]:
    """The reviewers who may act on this version: not the one who started its brief."""
    return [user for user in notifications.members(Roles.REVIEWER) if user.pk not in version.analyst_ids]


def _check_reviewer(reviewer: User, version: ArtefactVersion, what: str) -> None:
    if not has_role(reviewer, Roles.REVIEWER):
        raise ReviewRefused(f"only reviewers {what} a version")
    if reviewer.pk in _starters(version):
        raise ReviewRefused(f"you started this brief, so another reviewer must {what} {version.label}")


def _starters(version: ArtefactVersion) -> tuple[int, ...]:
    return (*version.analyst_ids, version.run.created_by_id)


def _pinned(motion: Motion | None) -> tuple[int, float]:
    if motion is not None and motion.min_votes is not None and motion.approval_share is not None:
        return motion.min_votes, motion.approval_share
    rules = policy()
    return rules.min_votes, rules.approval_share


def _reads_votes(user: User, version: ArtefactVersion, is_member: bool) -> bool:
    """Who reads the choices and rationales once the vote closed: the committee, the reviewers, the brief's
    analyst and run starter, admins; not the executives, who read what was published."""
    return is_member or user.is_superuser or user.pk in _starters(version) or has_role(user, Roles.REVIEWER)


def _locked(version: ArtefactVersion) -> ArtefactVersion:
    """The version with its row locked, and only its row: a vote does not hold up the brief's next freeze or
    the company's data load. Its status moves are conditional (``_move``), which is what keeps a
    publication and a freeze of a newer version from overwriting each other."""
    return (
        ArtefactVersion.objects.select_for_update(of=("self",))
        .select_related("brief__company", "run")
        .get(pk=version.pk)
    )


def _move(version: ArtefactVersion, *, expected: tuple[str, ...], to: str, **also: Any) -> None:
    if not move_status(version, expected=expected, to=to, **also):
        now = ArtefactVersion.objects.get(pk=version.pk).get_status_display().lower()
        raise ReviewRefused(f"{version.label} changed meanwhile: it is {now} now; nothing was done")


def accept_partial(*, version: ArtefactVersion, analyst: User) -> Motion:
    """The brief's analyst accepts a partial version as it is: the committee's vote opens on it, every part
    that did not finish named in the audit trail. Refused for anyone else, for a whole version, for one with
    no evaluator's verdict, for one no longer in review, and for one accepted already."""
    with transaction.atomic():
        locked = _locked(version)
        if analyst.pk != locked.brief.owner_id or not has_role(analyst, Roles.ANALYST):
            raise ReviewRefused(f"only the brief's analyst accepts {locked.label} as partial")
        if not locked.partial:
            raise ReviewRefused(f"{locked.label} is whole: there is nothing to accept as partial")
        if not locked.evaluated:
            raise ReviewRefused(
                f"{locked.label} has no evaluator's verdict, so no vote can open on it: retry what failed"
            )
        if locked.status != Status.READY_FOR_REVIEW:
            raise ReviewRefused(
                f"{locked.label} is {locked.get_status_display().lower()}: "
                "only a version in review is accepted as partial"
            )
        if Motion.objects.filter(version=locked).exists():
            raise ReviewRefused(f"{locked.label} was accepted as partial already")
        steps = [part["step"] for part in locked.unfinished]
        record(locked, Action.PARTIAL_ACCEPTED, actor=analyst, detail={"unfinished": steps})
        motion = open_vote(locked)
        committee = notifications.members(Roles.COMMITTEE)
        notifications.notify(
            version=locked,
            event=Notice.Event.VOTE_NEEDED,
            recipients=committee,
            note=f"Its analyst accepted it as partial: {', '.join(steps)} did not finish.",
        )
        send_version_changed(locked.pk)
    return motion


def _closed_because(version: ArtefactVersion) -> str:
    motion = Motion.objects.filter(version=version).first()
    if motion is None and version.partial:
        return "parts of its run did not finish, and its analyst has not accepted it as partial"
    if motion is None:
        return "it never opened"
    return motion.closed_because or "closed"


def _tally_detail(counted: Tally) -> dict[str, Any]:
    return {
        "approve": counted.approve,
        "reject": counted.reject,
        "abstain": counted.abstain,
        "recused": counted.recused,
        "eligible": counted.eligible,
        "min_votes": counted.min_votes,
        "approval_share": counted.approval_share,
    }
