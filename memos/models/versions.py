"""Frozen versions of a brief's artefact, their files, and the review around them: motions, votes, notices,
audit.

Every run that completes freezes its artefact (a memo or a deck; debated moves or a sector screen later:
``kind``) as the next version of its brief's line of that kind: memo v1, v2, ... and deck v1, v2, ... side
by side. A version's content never changes: a database trigger (migration 0008) refuses an UPDATE of
anything but its review status and publication time, and any DELETE, on every write path (the ORM, the
admin, bulk updates, raw SQL). Its files (its PDF, a deck's PPTX) are as immutable, and the audit trail is
append-only the same way; votes, motions and notices are guarded by triggers too (which columns may move,
and when). The rules of who may do what, and when, live in ``memos.services.review``, freezing in
``memos.services.versions``, the files in ``memos.services.version_files``.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memos.models.runs import Brief, Run


class ArtefactVersion(models.Model):
    class Status(models.TextChoices):
        READY_FOR_REVIEW = "ready_for_review", "Ready for review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        PUBLISHED = "published", "Published"
        SUPERSEDED = "superseded", "Superseded"

    OPEN_STATUSES: ClassVar = (Status.READY_FOR_REVIEW, Status.CHANGES_REQUESTED, Status.APPROVED)

    brief = models.ForeignKey(Brief, on_delete=models.PROTECT, related_name="versions")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(help_text="v1, v2, ... per brief and kind: each kind is a line")
    kind = models.CharField(
        max_length=20, help_text="the name of the workflow that froze it (its run's workflow)"
    )
    title = models.CharField(max_length=300)
    content = models.JSONField(help_text="the artefact's typed output, exactly as the run finished it")
    rendered_text = models.TextField(help_text="the artefact as plain text, section by section")
    content_hash = models.CharField(max_length=64, help_text="sha256 of kind, content and text")
    evaluated = models.BooleanField(help_text="an evaluator's verdict stands behind it: it may be voted on")
    brief_as_frozen = models.JSONField(
        default=dict,
        blank=True,
        help_text="the brief as it stood when frozen: question, audience, notes, owner_id, owner",
    )
    unfinished = models.JSONField(
        default=list,
        blank=True,
        help_text="the parts of its run that did not finish ({step, reason, stage, key}): empty when whole",
    )
    score = models.FloatField(null=True, blank=True, help_text="the headline score (memo: calibrated J+)")
    score_label = models.CharField(max_length=60, blank=True)
    score_delta = models.FloatField(null=True, blank=True, help_text="against the previous version")
    scores = models.JSONField(default=dict, blank=True)
    sections = models.JSONField(default=dict, help_text="section name -> plain text, for the diff")
    sources = models.JSONField(default=list, help_text="the facts and documents it cites, as they stood")
    prompt_versions = models.JSONField(default=dict, blank=True)
    rubric_versions = models.JSONField(default=dict, blank=True)
    model_versions = models.JSONField(default=dict, blank=True, help_text="role -> model, from the ledger")
    verdict_families = models.JSONField(
        default=list, blank=True, help_text="its verdicts' model families, from its run (seed 003's badge)"
    )
    data_version = models.CharField(max_length=64, blank=True)
    changelog = models.TextField(help_text="what changed against the previous version, by code")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.READY_FOR_REVIEW)
    published_at = models.DateTimeField(null=True, blank=True)
    # Set by freezing when it prepares the version (its PDF prints it) rather than when the row is inserted.
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering: ClassVar = ["brief", "-number"]
        constraints: ClassVar = [
            # A brief's memos and decks are lines of their own, scored on their own scales: a deck never
            # supersedes a memo, nor is compared with one (memos.services.versions.freeze, previous_of).
            # Versions frozen before the lines were split keep the numbers they were frozen (and announced)
            # with, so an old line may start at v2: the trigger of 0008 keeps a number as it is.
            models.UniqueConstraint(fields=["brief", "kind", "number"], name="one_version_number_per_line"),
            # A run that finishes twice with the same artefact (a retried finish) freezes it once.
            models.UniqueConstraint(fields=["run", "content_hash"], name="one_version_per_run_content"),
            # A published version says when (memos.services.review.publish sets both in one UPDATE), and only
            # a published version, or one a newer publication superseded, has a time: executives read the
            # versions with a time (memos.services.access.visible_versions), so a superseded one stays
            # readable to them, and one superseded while still in review never becomes readable.
            models.CheckConstraint(
                condition=~Q(status="published") | Q(published_at__isnull=False),
                name="a_published_version_says_when",
            ),
            models.CheckConstraint(
                condition=Q(published_at__isnull=True) | Q(status__in=["published", "superseded"]),
                name="only_a_published_version_has_a_publication_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.brief} {self.named}"

    @property
    def label(self) -> str:
        return f"v{self.number}"

    @property
    def named(self) -> str:
        """The label with its kind ("deck v2"), for a page or message that shows versions of several kinds."""
        return f"{self.kind} {self.label}"

    @property
    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES

    @property
    def question(self) -> str:
        """The brief's question as it stood when the version was frozen: an admin's later edit of the brief
        does not rewrite what was asked (a version frozen before this was kept shows the brief's own)."""
        return str(self.brief_as_frozen.get("question") or self.brief.question)

    @property
    def analyst_ids(self) -> frozenset[int]:
        """Who was its brief's analyst when it was frozen, and who is now: neither votes on it, approves it
        or scores it, so an admin's change of owner never lets the analyst who made it judge it."""
        frozen = self.brief_as_frozen.get("owner_id")
        return frozenset(pk for pk in (frozen, self.brief.owner_id) if isinstance(pk, int))

    @property
    def partial(self) -> bool:
        """Parts of its run did not finish: it says so, and no vote opens until its analyst accepts it."""
        return bool(self.unfinished)

    @property
    def ordered_sections(self) -> list[tuple[str, str]]:
        """(name, text) in reading order. ``sections`` is jsonb, which keeps no key order; the frozen text
        (``rendered_text``, one ``## name`` heading per section) does."""
        order = [line[3:] for line in self.rendered_text.splitlines() if line.startswith("## ")]
        names = [name for name in order if name in self.sections]
        names += [name for name in self.sections if name not in names]
        return [(name, str(self.sections[name])) for name in names]


class VersionFile(models.Model):
    """One file a frozen version is (its ``render.pdf``; a deck's ``deck.pptx`` too), rendered once when the
    version was frozen and served from here byte for byte ever after: a change of a renderer or a template
    never alters an old version. A version frozen before its files were kept gets them on first need, once
    (memos.services.version_files).

    As immutable as the version: migration 0013's trigger refuses any UPDATE and DELETE, and its check ties
    ``sha256`` and ``size`` to the bytes, so the ETag the downloads send and the hash the export writes are
    the bytes' own (memos.services.version_files and memos.management.commands.export_versions rely on it).
    """

    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="files")
    name = models.CharField(max_length=40, help_text="render.pdf, deck.pptx: its name in an export")
    content_type = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField(help_text="bytes")
    body = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints: ClassVar = [
            # Two readers backfilling the same old version at once store its file once: the second insert
            # is ignored and both serve the row that won (memos.services.version_files.file_of).
            models.UniqueConstraint(fields=["version", "name"], name="one_file_per_version_and_name"),
        ]

    def __str__(self) -> str:
        return f"{self.version} {self.name}"


class PendingPrint(models.Model):
    """A frozen version's PDF still to be printed, and the HTML it is printed from: made from the version
    alone when it was frozen, so the print, however late, shows what was frozen. Printing is off the run's
    path: a worker prints it right after the freeze commits (memos.services.version_files); a reader who
    asks first has it printed then. The row goes once its VersionFile is stored.

    A row named ``*`` with no HTML stands for every file of a version whose workflow makes its files after
    the freeze (memos.services.surfaces.Files.after_freeze): they are made from the frozen version."""

    version = models.ForeignKey(ArtefactVersion, on_delete=models.CASCADE, related_name="pending_prints")
    name = models.CharField(max_length=40, help_text="the file it becomes: render.pdf; * for every file")
    html = models.TextField()
    # The origin its relative links resolve against ("" = none: its styles are inline) and whether the
    # app's static files may be read for it (agents.render.pdf's fetcher).
    base_url = models.CharField(max_length=300, blank=True)
    static = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["version", "name"], name="one_pending_print_per_file"),
        ]

    def __str__(self) -> str:
        return f"{self.version} {self.name} (to print)"


def below_one(value: float) -> None:
    if value >= 1:
        raise ValidationError("the approval share must be less than 1: more than every member cannot approve")


class ReviewPolicy(models.Model):
    """The quorum and threshold a reviewer's approval needs, set in the admin (one row, pk 1). A motion pins
    the policy of the moment it opens (``Motion.min_votes``, ``Motion.approval_share``): a change here
    applies to the motions opened after it."""

    min_votes = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)], help_text="non-recused votes cast, at least"
    )
    approval_share = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0.0), below_one],
        help_text="approvals must be more than this share of the non-recused committee members",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "review policy"

    def __str__(self) -> str:
        share = f"{self.approval_share:.0%}"
        return f"at least {self.min_votes} votes, approvals over {share} of non-recused members"

    @classmethod
    def current(cls) -> ReviewPolicy:
        """The admin's policy, or its defaults when the row is missing (reading a page never writes it)."""
        return cls.objects.filter(pk=1).first() or cls(pk=1)


class Vote(models.Model):
    """A committee member's vote on a version, or their recusal: one per member and version (a constraint),
    changed in place. A trigger (migration 0013) lets a vote be cast or changed only while its version's
    motion is open and not after its member asked for the version's approval (the sealed ballot,
    memos.services.review), keeps who voted on what, and refuses any DELETE."""

    class Choice(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        ABSTAIN = "abstain", "Abstain"
        RECUSED = "recused", "Recused (conflict declared)"

    NEEDS_RATIONALE: ClassVar = (Choice.REJECT, Choice.ABSTAIN, Choice.RECUSED)

    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="votes")
    member = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="votes")
    choice = models.CharField(max_length=10, choices=Choice.choices)
    rationale = models.TextField(blank=True)
    cast_at = models.DateTimeField(auto_now_add=True)
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["version", "member"], name="one_vote_per_member_per_version"),
            models.CheckConstraint(
                condition=Q(choice="approve") | ~Q(rationale=""), name="a_vote_other_than_approve_says_why"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.member} {self.choice} {self.version}"


class Motion(models.Model):
    """The committee's open question on one version: opened when an evaluated version is frozen, closed by a
    newer version, a request for changes or the approval.

    It pins the review policy of the moment it opened (``min_votes``, ``approval_share``): an admin's later
    change does not move the goalposts of a vote under way. Motions closed before policies were pinned
    (migration 0013) have none; every open one has. A trigger (0013) keeps the pins and the opening as they
    were, lets ``closed_at`` go from empty to set once and never back, and refuses any DELETE.
    """

    version = models.OneToOneField(ArtefactVersion, on_delete=models.PROTECT, related_name="motion")
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_because = models.CharField(max_length=200, blank=True)
    min_votes = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="the quorum pinned when it opened: non-recused votes cast, at least"
    )
    approval_share = models.FloatField(
        null=True,
        blank=True,
        help_text="the threshold pinned when it opened: approvals over this share of the non-recused members",
    )

    class Meta:
        constraints: ClassVar = [
            # One open motion per brief at a time is kept by the services; this keeps one per version.
            models.CheckConstraint(
                condition=Q(closed_at__isnull=True) | ~Q(closed_because=""), name="a_closed_motion_says_why"
            ),
            # memos.services.review.tally counts an open motion under its own pins, never the live policy.
            models.CheckConstraint(
                condition=Q(closed_at__isnull=False)
                | Q(min_votes__isnull=False, approval_share__isnull=False),
                name="an_open_motion_has_its_policy_pinned",
            ),
        ]

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class AuditEvent(models.Model):
    """One transition of a version, bound to its content hash; append-only in the database (0008)."""

    class Action(models.TextChoices):
        FROZEN = "frozen", "Frozen"
        MOTION_OPENED = "motion_opened", "Vote opened"
        MOTION_CLOSED = "motion_closed", "Vote closed"
        VOTED = "voted", "Voted"
        VOTE_CHANGED = "vote_changed", "Changed a vote"
        RECUSED = "recused", "Recused"
        CHANGES_REQUESTED = "changes_requested", "Requested changes"
        APPROVAL_REFUSED = "approval_refused", "Approval refused"
        APPROVED = "approved", "Approved"
        PUBLISHED = "published", "Published"
        SUPERSEDED = "superseded", "Superseded"
        FALSIFIER_HIT = "falsifier_hit", "Falsifier hit: position re-opened"
        PARTIAL_ACCEPTED = "partial_accepted", "Accepted as partial"

    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="audit")
    content_hash = models.CharField(max_length=64, help_text="the version's content hash when it happened")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="empty: the desk itself (a run finishing, a newer version)",
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.version} {self.action}"


class Notice(models.Model):
    """What a person is told about a version, in the app and by e-mail: one per person, version and event
    (a database constraint), so nobody hears of the same thing twice. What it says never changes and it is
    never deleted (a trigger, migration 0013); only its bookkeeping moves: read, and the e-mail's claim,
    attempts and outcome (memos.services.notifications)."""

    class Event(models.TextChoices):
        FROZEN = "frozen", "New version ready"
        VOTE_NEEDED = "vote_needed", "Your vote is needed"
        QUORUM_REACHED = "quorum_reached", "Ready for approval"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        PUBLISHED = "published", "Published"
        FALSIFIER_HIT = "falsifier_hit", "A falsifier was hit"
        ESCALATED = "escalated", "Escalated: it never cleared the entry bar"
        PARTIAL = "partial", "Partial: parts of its run did not finish"

    # Never deleted (a trigger, migration 0013), so neither is the person it was sent to: deactivate them.
    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="notices")
    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="notices")
    event = models.CharField(max_length=20, choices=Event.choices)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    link = models.CharField(max_length=500, help_text="absolute URL of the version")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    sending_since = models.DateTimeField(null=True, blank=True, help_text="a sender has claimed the e-mail")
    emailed_at = models.DateTimeField(null=True, blank=True)
    email_error = models.TextField(blank=True)
    email_attempts = models.PositiveSmallIntegerField(default=0, help_text="failed attempts to e-mail it")
    next_email_at = models.DateTimeField(
        null=True, blank=True, help_text="after a failed attempt: no sender tries again before this"
    )
    email_failed_at = models.DateTimeField(
        null=True, blank=True, help_text="the last attempt failed: the e-mail is given up, the notice stays"
    )

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["recipient", "version", "event"], name="one_notice_per_person_version_event"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.recipient} · {self.subject}"

    @property
    def email_state(self) -> str:
        """The e-mail in a few words, for the notices page and the admin."""
        if self.emailed_at is not None:
            return "e-mailed"
        if self.email_failed_at is not None:
            tries = f"{self.email_attempts} attempt{'s' if self.email_attempts != 1 else ''}"
            return f"e-mail failed after {tries}"
        if self.email_attempts:
            return f"e-mail not sent yet ({self.email_attempts} failed, trying again)"
        return ""
