"""The review of a frozen version: the committee votes, a reviewer approves or requests changes, a reviewer
publishes to the executives. Every transition is checked here, by code, and recorded in the audit trail.

Who may do what:
- a committee member votes on a version with an open motion (approve, reject or abstain; reject and
  abstain say why) or declares a conflict and recuses; one vote per member per version (a constraint),
  a changed vote replaces the old one and the change is recorded;
- a reviewer approves only when the quorum and threshold of the review policy are met, never on a brief
  they started, and requests changes with a comment (the motion closes, the analyst hears of it);
- a reviewer publishes an approved version; the previously published version of its line (the brief's
  memos, or its decks) is superseded.
Each of these is a person's request through a page: nothing a model writes reaches them (a run only
freezes versions and opens motions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from memos.live.events import send_version_changed
from memos.models import ArtefactVersion, AuditEvent, Motion, Notice, ReviewPolicy, Vote
from memos.services import notifications
from memos.services.accounts import Roles
from memos.services.errors import ServiceError
from memos.services.versions import close_motion, record

Status = ArtefactVersion.Status
Action = AuditEvent.Action
Choice = Vote.Choice
RATIONALE_CHARS = 2000


class ReviewRefused(ServiceError):
    """A review action that the rules do not allow now; the message says which rule."""


def policy() -> ReviewPolicy:
    """The admin's policy, or its defaults when the row is missing (reading a page never writes it)."""
    return ReviewPolicy.objects.filter(pk=1).first() or ReviewPolicy(pk=1)


def has_role(user: Any, role: str) -> bool:
    if not isinstance(user, User) or not user.is_active:
        return False
    return user.groups.filter(name=role).exists()


@dataclass(frozen=True)
class Tally:
    approve: int
    reject: int
    abstain: int
    recused: int
    members: int  # the committee's active members
    min_votes: int
    approval_share: float

    @property
    def eligible(self) -> int:
        """Members who count toward the quorum: everyone but the recused."""
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

    def shortfall(self) -> str:
        """Why an approval is refused now, in the policy's words."""
        if not self.quorum_met:
            return (
                f"the quorum is not met: {self.cast} of the {self.min_votes} non-recused votes it needs "
                f"have been cast"
            )
        return (
            f"the threshold is not met: {self.approve} approval{'s' if self.approve != 1 else ''}, "
            f"{self.approvals_needed} needed (more than {self.approval_share:.0%} of {self.eligible} "
            f"non-recused member{'s' if self.eligible != 1 else ''})"
        )


def tally(version: ArtefactVersion) -> Tally:
    counts = {choice: 0 for choice in Choice.values}
    for choice in version.votes.values_list("choice", flat=True):
        counts[choice] += 1
    rules = policy()
    return Tally(
        approve=counts[Choice.APPROVE],
        reject=counts[Choice.REJECT],
        abstain=counts[Choice.ABSTAIN],
        recused=counts[Choice.RECUSED],
        members=len(notifications.members(Roles.COMMITTEE)),
        min_votes=rules.min_votes,
        approval_share=rules.approval_share,
    )


def open_motion(version: ArtefactVersion) -> Motion | None:
    return Motion.objects.filter(version=version, closed_at__isnull=True).first()


def cast_vote(member: User, version: ArtefactVersion, choice: str, rationale: str = "") -> Vote:
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
        if not locked.evaluated:
            raise ReviewRefused(
                f"{locked.label} has no evaluator's verdict: "
                "it cannot be voted on until an evaluation succeeds"
            )
        if open_motion(locked) is None:
            raise ReviewRefused(f"the vote on {locked.label} is closed ({_closed_because(locked)})")
        before = tally(locked).passed
        earlier = Vote.objects.filter(version=locked, member=member).first()
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
        if tally(locked).passed and not before:
            notifications.notify(locked, Notice.Event.QUORUM_REACHED, reviewers_for(locked))
        send_version_changed(locked.pk)
    return vote


def approve(reviewer: User, version: ArtefactVersion) -> ArtefactVersion:
    """Approve for publication, or refuse saying which rule is not met; a refusal for want of votes is
    recorded in the audit trail too (it commits, then the refusal is raised)."""
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
        counted = tally(locked)
        if counted.passed:
            _set_status(locked, Status.APPROVED)
            record(locked, Action.APPROVED, actor=reviewer, detail=_tally_detail(counted))
            close_motion(locked, "approved", actor=reviewer)
            others = [user for user in reviewers_for(locked) if user.pk != reviewer.pk]
            notifications.notify(locked, Notice.Event.APPROVED, [locked.brief.owner, *others])
        else:
            refused = counted.shortfall()
            record(locked, Action.APPROVAL_REFUSED, actor=reviewer, detail={"reason": refused})
        send_version_changed(locked.pk)
    if refused:
        raise ReviewRefused(f"{locked.label} cannot be approved yet: {refused}")
    return locked


def request_changes(reviewer: User, version: ArtefactVersion, comment: str) -> ArtefactVersion:
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
        _set_status(locked, Status.CHANGES_REQUESTED)
        record(locked, Action.CHANGES_REQUESTED, actor=reviewer, detail={"comment": comment})
        close_motion(locked, "changes requested", actor=reviewer)
        notifications.notify(locked, Notice.Event.CHANGES_REQUESTED, [locked.brief.owner], note=comment)
        send_version_changed(locked.pk)
    return locked


def publish(reviewer: User, version: ArtefactVersion) -> ArtefactVersion:
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
            _set_status(older, Status.SUPERSEDED)
            record(older, Action.SUPERSEDED, actor=reviewer, detail={"by": locked.label})
            send_version_changed(older.pk)
        ArtefactVersion.objects.filter(pk=locked.pk).update(
            status=Status.PUBLISHED, published_at=timezone.now()
        )
        locked.refresh_from_db(fields=["status", "published_at"])
        record(locked, Action.PUBLISHED, actor=reviewer)
        audience = [
            *notifications.members(Roles.EXECUTIVE),
            locked.brief.owner,
            *notifications.members(Roles.COMMITTEE),
        ]
        notifications.notify(locked, Notice.Event.PUBLISHED, audience)
        send_version_changed(locked.pk)
    return locked


def reviewers_for(version: ArtefactVersion) -> list[User]:
    """The reviewers who may act on this version: not the one who started its brief."""
    return [user for user in notifications.members(Roles.REVIEWER) if user.pk != version.brief.owner_id]


def _check_reviewer(reviewer: User, version: ArtefactVersion, what: str) -> None:
    if not has_role(reviewer, Roles.REVIEWER):
        raise ReviewRefused(f"only reviewers {what} a version")
    if reviewer.pk in (version.brief.owner_id, version.run.created_by_id):
        raise ReviewRefused(f"you started this brief, so another reviewer must {what} {version.label}")


def _locked(version: ArtefactVersion) -> ArtefactVersion:
    return (
        ArtefactVersion.objects.select_for_update().select_related("brief__company", "run").get(pk=version.pk)
    )


def _set_status(version: ArtefactVersion, status: str) -> None:
    ArtefactVersion.objects.filter(pk=version.pk).update(status=status)
    version.status = status


def _closed_because(version: ArtefactVersion) -> str:
    motion = Motion.objects.filter(version=version).first()
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
