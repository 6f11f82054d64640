"""The deck judge's calibration against people (seed 001 section 2): gold scores and calibration runs.

A ``GoldScore`` is one person's integer scores of one frozen deck version on one rubric. A ``Calibration``
is one check of the judge against every gold score of a rubric: the active rubric version and the scorer's
model it measured, how often the judge landed within one point of the person, and the verdict. The loop's
rubric is trusted only while its pinned version has a passed calibration for the configured scorer model
(memos.pipeline.deck.desk.calibration.is_calibrated): without one, a better R2 may be the judge's variance.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from memos.models.governance import RubricVersion
from memos.models.versions import ArtefactVersion

DECK_KIND = "deck"
SCORE_MIN, SCORE_MAX = 0, 5  # the judge's scale (agents.deck.schemas.Score)


class GoldScore(models.Model):
    """A person's scores of a frozen deck on one rubric. Which dimensions it must hold depends on the
    active rubric version, a rule across rows: memos.pipeline.deck.desk.calibration.gold_score_problems checks
    it (the admin's form and ``record_gold_score`` both call it). ``clean`` holds the rules about this row."""

    class Rubric(models.TextChoices):
        DECK_R2 = "deck_r2", "R2: the refinement loop's composite"
        DECK_R1 = "deck_r1", "R1: the entry bar"

    version = models.ForeignKey(ArtefactVersion, on_delete=models.PROTECT, related_name="gold_scores")
    rubric = models.CharField(max_length=20, choices=Rubric.choices, default=Rubric.DECK_R2)
    scores = models.JSONField(help_text="dimension -> integer 0-5, every dimension of the rubric's composite")
    scored_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        constraints: ClassVar = [
            # One person's view of one deck per rubric: a second would weigh that person twice.
            models.UniqueConstraint(
                fields=["version", "rubric", "scored_by"], name="one_gold_score_per_person_per_version"
            ),
            models.CheckConstraint(condition=Q(rubric__in=["deck_r1", "deck_r2"]), name="gold_score_rubric"),
        ]

    def __str__(self) -> str:
        return f"{self.rubric} gold score of {self.version} by {self.scored_by}"

    def clean(self) -> None:
        if self.version_id is not None and self.version.kind != DECK_KIND:
            raise ValidationError(
                {"version": f"only a deck version can be a gold example; this one is a {self.version.kind}"}
            )
        if not isinstance(self.scores, dict):
            raise ValidationError({"scores": "scores must be an object of dimension -> integer"})
        wrong = sorted(
            key
            for key, value in self.scores.items()
            if isinstance(value, bool) or not isinstance(value, int) or not SCORE_MIN <= value <= SCORE_MAX
        )
        if wrong:
            raise ValidationError(
                {"scores": f"scores must be whole numbers {SCORE_MIN}-{SCORE_MAX}: {', '.join(wrong)}"}
            )


class Calibration(models.Model):
    """One run of the check: the judge scored every gold example again and was compared with the person."""

    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="calibrations")
    scorer_model = models.CharField(max_length=200, help_text="the scorer: its model on its endpoint")
    examples = models.PositiveIntegerField(help_text="gold scores the judge scored again")
    skipped = models.PositiveIntegerField(
        default=0, help_text="gold scores of decks the judge cannot be shown as the loop shows them"
    )
    decks = models.PositiveIntegerField(
        default=0, help_text="distinct decks among the examples: one per version line, distinct by content"
    )
    raters = models.PositiveIntegerField(default=0, help_text="distinct people whose scores were compared")
    pairs = models.PositiveIntegerField(help_text="(dimension, example) pairs compared")
    within_one = models.FloatField(help_text="share of pairs where the judge was within one point")
    mean_diff = models.FloatField(
        default=0.0, help_text="mean of judge minus person over every pair: above 0, the judge is the kinder"
    )
    correlation = models.FloatField(
        null=True,
        blank=True,
        help_text="Pearson correlation of judge and person; none when either is constant",
    )
    by_dimension = models.JSONField(
        default=dict,
        help_text="dimension -> {mean_abs_diff, mean_diff, within_one, correlation, pairs}: judge vs person",
    )
    passed = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["-created_at", "-pk"]

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "not passed"
        return f"{self.rubric_version} on {self.scorer_model}: {verdict}"
