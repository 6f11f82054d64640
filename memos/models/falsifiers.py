"""The positions register (seed 000): a frozen memo's falsifiers that are bound to a metric, watched against
newer data.

Status machine: watching -> hit (a newer fact met the condition: the position is re-opened) or watching ->
closed (a newer version of the brief was frozen and watches its own falsifiers). Both moves are conditional
UPDATEs from ``watching`` (memos.pipeline.memo.desk.falsifiers, memos.pipeline.memo.desk.falsifier_hits), so
two loads checking at once hit a watch once. The reference value is a fact code read when the version was
frozen; the model chose only the metric and the condition, from closed lists (agents.memo.schemas).
"""

from __future__ import annotations

from typing import ClassVar

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from agents.data.formatting import format_value
from agents.memo.falsifiers import CONDITION_WORDS, CONDITIONS, WATCHED_METRICS
from memos.models.facts import Company
from memos.models.runs import Brief, Run
from memos.models.versions import ArtefactVersion

MAX_FALSIFIER_TEXT = 400


class FalsifierWatch(models.Model):
    class Status(models.TextChoices):
        WATCHING = "watching", "Watching"
        HIT = "hit", "Hit: position re-opened"
        CLOSED = "closed", "Closed by a newer version"

    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="falsifier_watches")
    brief = models.ForeignKey(Brief, on_delete=models.PROTECT, related_name="falsifier_watches")
    company = models.ForeignKey(Company, on_delete=models.PROTECT, related_name="falsifier_watches")
    number = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(3)],
        help_text="the falsifier's number in the memo",
    )
    text = models.CharField(max_length=MAX_FALSIFIER_TEXT, help_text="the falsifier as the memo states it")
    metric = models.CharField(max_length=60, choices=[(m, m) for m in WATCHED_METRICS])
    condition = models.CharField(max_length=30, choices=[(c, c.replace("_", " ")) for c in CONDITIONS])
    baseline_fact_id = models.CharField(max_length=120, help_text="the metric's latest fact when frozen")
    baseline_value = models.DecimalField(max_digits=32, decimal_places=10)
    baseline_period_end = models.DateField()
    baseline_fiscal_period = models.CharField(max_length=8)
    unit = models.CharField(max_length=30, help_text="the metric's unit, as the fact store holds it")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WATCHING)
    hit_fact_id = models.CharField(max_length=120, blank=True)
    hit_value = models.DecimalField(max_digits=32, decimal_places=10, null=True, blank=True)
    hit_at = models.DateTimeField(null=True, blank=True)
    run = models.ForeignKey(
        Run,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="falsifier_hits",
        help_text="the run re-examining the position: started by the hit, or already running",
    )
    reopen_note = models.CharField(max_length=300, blank=True, help_text="what the hit did about a run")
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["version", "number"]
        constraints: ClassVar = [
            # Freezing twice (a retried finish finds its version) never watches a falsifier twice.
            models.UniqueConstraint(fields=["version", "number"], name="one_watch_per_falsifier"),
            models.CheckConstraint(
                condition=~Q(status="hit") | (~Q(hit_fact_id="") & Q(hit_at__isnull=False)),
                name="a_hit_watch_names_its_fact",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version} falsifier {self.number}: {self.metric} {self.condition}"

    @property
    def condition_words(self) -> str:
        return CONDITION_WORDS.get(self.condition, self.condition)

    @property
    def baseline_shown(self) -> str:
        return format_value(self.baseline_value, self.unit)

    @property
    def hit_shown(self) -> str:
        return format_value(self.hit_value, self.unit) if self.hit_value is not None else ""
