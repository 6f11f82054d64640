"""The LLM-call ledger: one row per attempt at one request. ``request_hash`` is the cache key (agents.llm)."""

from __future__ import annotations

from typing import ClassVar

from django.db import models

from memos.models.runs import Run


class LLMCall(models.Model):
    """One attempt at one LLM request: the ledger. ``request_hash`` is the cache key (see agents.llm)."""

    class Outcome(models.TextChoices):
        OK = "ok"
        CACHED = "cached"
        INVALID = "invalid"
        ERROR = "error"
        TIMEOUT = "timeout"
        BUDGET = "budget"

    # Set by the caller for each attempt: a ledger write retried after a lost database connection finds its
    # own row instead of recording (and charging) the attempt twice.
    attempt_id = models.UUIDField(unique=True, null=True, blank=True, editable=False)
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
