"""Briefs and the runs that answer them: the run's state machine, who holds it, and its steps."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memos.models.facts import Company

DEFAULT_AUDIENCE = "Investment committee"
DEFAULT_WORKFLOW = "memo"  # what a brief asks for when it names no workflow
MAX_WATCHLIST = 200  # symbols on one watchlist


class Brief(models.Model):
    """What an analyst asks: a question for an audience about one subject, a company (a memo, a deck, the
    agency's moves) or a watchlist of symbols (the sector screen). Exactly one of the two: a database
    constraint, which memos.services.runs.start_run relies on to match a brief to its workflow's subject."""

    # Size limits a person sees as form errors (services.runs words them); the columns hold the same bounds.
    MAX_QUESTION_CHARS: ClassVar = 2000
    MAX_AUDIENCE_CHARS: ClassVar = 200
    MAX_NOTES_CHARS: ClassVar = 4000

    company = models.ForeignKey(
        Company, on_delete=models.PROTECT, related_name="briefs", null=True, blank=True
    )
    symbols = ArrayField(
        models.CharField(max_length=16),
        default=list,
        blank=True,
        size=MAX_WATCHLIST,
        help_text="a watchlist: the symbols a screen covers (a brief about a company has none)",
    )
    question = models.TextField()
    audience = models.CharField(max_length=200, default=DEFAULT_AUDIENCE)
    notes = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="briefs")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        constraints: ClassVar = [
            models.CheckConstraint(
                condition=Q(company__isnull=False, symbols=[]) | Q(company__isnull=True) & ~Q(symbols=[]),
                name="a_brief_is_about_a_company_or_a_watchlist",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject}: {self.question[:60]}"

    @property
    def subject(self) -> str:
        """What the brief is about, as pages and messages name it: the company's ticker, or the watchlist."""
        if self.company is not None:
            return self.company.ticker
        return "watchlist " + ", ".join(self.symbols)

    @property
    def subject_kind(self) -> str:
        """ "company" or "watchlist" (memos.pipeline.workflows.Subject)."""
        return "company" if self.company_id is not None else "watchlist"


class Run(models.Model):
    """One pass of a workflow over a brief.

    Status machine: queued -> running -> (needs_review | done | failed | cancelled). Only the run engine
    (memos.pipeline.driver) changes it, always with a conditional UPDATE: a finished or failed run never
    returns to running. ``lease`` is the fencing token: every claim of a stage increments it, and every write
    a stage makes is checked against the token it claimed with, so a worker presumed dead that wakes up
    cannot overwrite the work of the one that took over. ``stage_attempts`` counts the claims of the current
    stage; past ``RUN_MAX_STAGE_ATTEMPTS`` the run fails with its last error instead of being resumed again.
    At most one queued or running run per brief (constraint below; services.runs.start_run turns it into
    a refusal).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        NEEDS_REVIEW = "needs_review", "Needs review"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE_STATUSES: ClassVar = (Status.QUEUED, Status.RUNNING)
    FINISHED_STATUSES: ClassVar = (Status.NEEDS_REVIEW, Status.DONE, Status.FAILED, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brief = models.ForeignKey(Brief, on_delete=models.PROTECT, related_name="runs")
    # No choices: the workflows are the registry's (memos.pipeline.registry), each named in its own package,
    # so a new one needs no migration. A run starts only through memos.services.runs.start_run, which refuses
    # a name the registry does not know; the admin never edits it.
    workflow = models.CharField(max_length=20, default=DEFAULT_WORKFLOW)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=40, blank=True, help_text="the stage running or queued next")
    status_message = models.TextField(blank=True)
    profile = models.CharField(max_length=20, default="full")
    data_version = models.CharField(max_length=64, blank=True)
    # The prompt and rubric versions the run started with, by name: {"version", "hash", "id"} (pinned by
    # memos.services.runs.start_run; read by memos.pipeline.prompts, so a resumed run keeps them).
    rubric_versions = models.JSONField(default=dict, blank=True)
    prompt_versions = models.JSONField(default=dict, blank=True)
    budget_tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_spent = models.PositiveIntegerField(default=0)
    tokens_reserved = models.PositiveIntegerField(
        default=0,
        help_text="tokens set aside for calls in flight, so parallel calls cannot overrun the budget",
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    lease = models.PositiveIntegerField(default=0, help_text="fencing token of the latest stage claim")
    stage_attempts = models.PositiveSmallIntegerField(default=0, help_text="claims of the current stage")
    nonce = models.CharField(
        max_length=32,
        blank=True,
        help_text="fences untrusted text in this run's prompts (see agents.text.untrusted)",
    )
    config = models.JSONField(
        default=dict,
        blank=True,
        help_text="what the run was started with: roster, iterations, models per role",
    )
    verdict_families = models.JSONField(
        default=list,
        blank=True,
        help_text="each verdict's judge and the work it judges, with their model families, as the run "
        "started (memos.pipeline.judge_families)",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs")
    retry_of = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="retries",
        help_text="the run whose failed parts this one retries, with its configuration and pins",
    )
    # Work the desk started on its own (the week, a scheduled screen, a refinement cycle, a weekly memo): it
    # runs after people's runs, on the queue and on the LLM's slots (memos.pipeline.priority).
    scheduled = models.BooleanField(
        default=False, help_text="started by the desk's schedule, not by a person: runs after people's work"
    )
    part_of = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="parts",
        help_text="the run that started this one as a part of its work (a week's screen, memos and cycles)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["brief"],
                condition=Q(status__in=["queued", "running"]),
                name="one_active_run_per_brief",
            )
        ]

    def __str__(self) -> str:
        return f"run {str(self.id)[:8]} of {self.brief} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def tokens_with_parts(self) -> int:
        """What the run spent, with what the runs it started as its parts spent so far (a week's screen and
        memos are charged to the week's budget as they spend, so the week's page counts them as they do)."""
        parts = self.parts.aggregate(spent=models.Sum("tokens_spent"))["spent"] or 0
        return int(self.tokens_spent + parts)

    @property
    def latest_version(self) -> Any:
        """The newest version this run froze (memos.models.versions), or None: one query, for the run's status
        line, which names it and links to it. Its columns of content are left unread (a screen's are a
        megabyte of JSON: 15 ms to read and parse on the freeze's path, for a link); any read later is
        fetched then."""
        return (
            self.versions.order_by("-number")
            .only("pk", "run_id", "brief_id", "kind", "number", "status")
            .first()
        )


class StageClaim(models.Model):
    """One worker's hold on one stage of a run, from claim to release: the audit of who ran what, when.

    Written by memos.pipeline.driver; the crash and restart tests read it to prove that no stage ran in two
    workers at once (a claim is closed before the next one on the same run is opened, unless the first
    worker vanished, in which case its claim ends ``abandoned``).
    """

    class Outcome(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished", "Stage finished"
        FAILED = "failed", "Run failed"
        ERROR = "error", "Error, to be resumed"
        LOST = "lost", "Lost its lease"
        ABANDONED = "abandoned", "Worker vanished"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="claims")
    stage = models.CharField(max_length=40)
    lease = models.PositiveIntegerField()
    worker = models.CharField(max_length=120, help_text="host and process id of the claiming worker")
    claimed_at = models.DateTimeField(auto_now_add=True)
    released_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.RUNNING)
    error = models.TextField(blank=True)

    class Meta:
        ordering: ClassVar = ["run", "lease"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["run", "lease"], name="one_claim_per_run_lease")
        ]

    def __str__(self) -> str:
        return f"{self.stage} #{self.lease} by {self.worker} ({self.outcome})"


class AgentStep(models.Model):
    """One agent's (or one piece of code's) part of a run and the step document it wrote: a specialist's
    brief, a synthesis iteration, the audit, the evaluator's report, the memo.

    ``(run, stage, key)`` is its natural key, so a stage that runs twice finds its finished steps and does
    not redo them. ``kind`` names the step's output type in its workflow (memos.pipeline.workflows), which
    says how the JSON in ``output`` is read back and drawn.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        SKIPPED = "skipped"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    stage = models.CharField(max_length=40)
    key = models.CharField(max_length=60)
    kind = models.CharField(max_length=40, help_text="the output type of this step in its workflow")
    position = models.PositiveSmallIntegerField(default=0, help_text="order within the stage")
    role = models.CharField(max_length=40, blank=True)
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    output = models.JSONField(null=True, blank=True)
    summary = models.CharField(max_length=200, blank=True, help_text="one line for the step's card")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["run", "position", "key"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["run", "stage", "key"], name="one_step_per_run_stage_key")
        ]

    def __str__(self) -> str:
        return f"{self.stage}/{self.key} ({self.status})"

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
