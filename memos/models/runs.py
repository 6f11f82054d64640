"""Rows of the Analyst Desk. Models hold the rules about one row; workflows across rows live in services/."""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q


class Company(models.Model):
    ticker = models.CharField(max_length=16, unique=True)
    cik = models.PositiveIntegerField(null=True, blank=True, unique=True)
    name = models.CharField(max_length=200)
    taxonomy = models.CharField(
        max_length=20, blank=True, help_text="us-gaap, ifrs-full, or inline XBRL only"
    )
    sector = models.CharField(max_length=80, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["ticker"]
        verbose_name_plural = "companies"

    def __str__(self) -> str:
        return f"{self.ticker} ({self.name})"


class FactRecord(models.Model):
    """A number owned by code (EDGAR, prices, the analysis engine) with its citation.

    ``fact_id`` is the stable id agents cite and the memo and deck render through.
    """

    class Source(models.TextChoices):
        COMPANYFACTS = "sec-companyfacts", "SEC companyfacts"
        INLINE_XBRL = "sec-inline-xbrl", "SEC inline XBRL filing"
        PRICES = "prices", "Daily prices"
        DERIVED = "derived", "Derived by code"

    fact_id = models.CharField(max_length=120, unique=True)
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="facts")
    metric = models.CharField(max_length=60)
    value = models.DecimalField(max_digits=32, decimal_places=10)
    unit = models.CharField(max_length=30)
    period_start = models.DateField(null=True, blank=True)
    period_end = models.DateField()
    fiscal_year = models.IntegerField(null=True, blank=True)
    fiscal_period = models.CharField(max_length=8)
    source = models.CharField(max_length=20, choices=Source.choices)
    concept = models.CharField(max_length=160, blank=True)
    form = models.CharField(max_length=20, blank=True)
    accession = models.CharField(max_length=25, blank=True)
    filed = models.DateField(null=True, blank=True)
    url = models.URLField(max_length=400)
    label = models.CharField(max_length=300, blank=True)
    derivation = models.TextField(blank=True)
    inputs = models.JSONField(default=list, blank=True, help_text="fact ids this figure was computed from")
    data_version = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["company", "metric", "period_end"]
        indexes: ClassVar = [models.Index(fields=["company", "metric", "period_end"])]

    def __str__(self) -> str:
        return self.fact_id


class SourceDocument(models.Model):
    """Untrusted text (news, filing excerpts, prediction markets), normalised before it was stored."""

    class Kind(models.TextChoices):
        NEWS = "news"
        FILING = "filing"
        PREDICTION_MARKET = "prediction-market"
        OTHER = "other"

    doc_id = models.CharField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=500)
    url = models.URLField(max_length=1000)
    published = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=120)
    text = models.TextField(blank=True)
    tickers = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-published", "doc_id"]

    def __str__(self) -> str:
        return f"{self.doc_id}: {self.title[:60]}"


class Brief(models.Model):
    """What an analyst asks: a company and a question for an audience."""

    company = models.ForeignKey(Company, on_delete=models.PROTECT, related_name="briefs")
    question = models.TextField()
    audience = models.CharField(max_length=200, default="Investment committee")
    notes = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="briefs")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.company.ticker}: {self.question[:60]}"


class Run(models.Model):
    """One pass of the pipeline over a brief.

    Status machine: queued -> running -> (needs_review | done | failed | cancelled); a stale running run is
    re-enqueued by the watchdog (heartbeat). At most one queued or running run per brief (constraint below;
    services.runs.start_run relies on it to refuse overlapping runs).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        NEEDS_REVIEW = "needs_review", "Needs review"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE_STATUSES: ClassVar = (Status.QUEUED, Status.RUNNING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brief = models.ForeignKey(Brief, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=40, blank=True)
    status_message = models.TextField(blank=True)
    profile = models.CharField(max_length=20, default="full")
    data_version = models.CharField(max_length=64, blank=True)
    rubric_versions = models.JSONField(default=dict, blank=True)
    budget_tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_spent = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    nonce = models.CharField(
        max_length=32,
        blank=True,
        help_text="fences untrusted text in this run's prompts (see agents.untrusted)",
    )
    config = models.JSONField(
        default=dict,
        blank=True,
        help_text="what the run was started with: roster, iterations, models per role",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="runs")
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


class LLMCall(models.Model):
    """One attempt at one LLM request: the ledger. ``request_hash`` is the cache key (see agents.llm)."""

    class Outcome(models.TextChoices):
        OK = "ok"
        CACHED = "cached"
        INVALID = "invalid"
        ERROR = "error"
        TIMEOUT = "timeout"
        BUDGET = "budget"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, null=True, blank=True, related_name="llm_calls")
    stage = models.CharField(max_length=40, blank=True)
    role = models.CharField(max_length=40)
    prompt_name = models.CharField(max_length=80)
    prompt_hash = models.CharField(max_length=64)
    model = models.CharField(max_length=120)
    base_url = models.CharField(max_length=300)
    request_hash = models.CharField(max_length=64, db_index=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    error = models.TextField(blank=True)
    raw_response = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        verbose_name = "LLM call"
        indexes: ClassVar = [models.Index(fields=["request_hash", "outcome"])]

    def __str__(self) -> str:
        return f"{self.role}/{self.prompt_name} {self.outcome}"


class DataLoad(models.Model):
    """One load of a data snapshot into the fact store; its ``data_version`` (a content hash) makes
    reloading an unchanged snapshot a no-op and lets a run name exactly which data it was given."""

    data_version = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=300, help_text="what was loaded (the snapshot folder)")
    counts = models.JSONField(default=dict, blank=True)
    loaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-loaded_at"]

    def __str__(self) -> str:
        return f"{self.data_version[:12]} loaded {self.loaded_at:%Y-%m-%d %H:%M}"


class AgentStep(models.Model):
    """One agent's piece of a run, and the document it wrote: a specialist's brief, a synthesis iteration,
    the fact-stability audit, the evaluator's report, the memo. ``(run, layer, key)`` is its natural key, so
    a stage that runs twice finds the finished steps and does not redo them."""

    class Layer(models.TextChoices):
        DATA = "data"
        SPECIALISTS = "specialists"
        SYNTHESIS = "synthesis"
        EVALUATION = "evaluation"
        MEMO = "memo"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        SKIPPED = "skipped"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    layer = models.CharField(max_length=20, choices=Layer.choices)
    key = models.CharField(max_length=60)
    position = models.PositiveSmallIntegerField(default=0, help_text="order within the layer")
    role = models.CharField(max_length=40, blank=True)
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    output = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["run", "position", "key"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["run", "layer", "key"], name="one_step_per_run_layer_key")
        ]

    def __str__(self) -> str:
        return f"{self.layer}/{self.key} ({self.status})"

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
