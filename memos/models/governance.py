"""Prompts and rubrics as versioned rows: seeded from ``prompts/``, edited in the admin, pinned by runs.

A version is immutable: an edit is a new row (the next number for its name), never a change to an old one, and
a database trigger (migration 0007) refuses an UPDATE of a version's content or identity and any DELETE, on
every write path. Only ``is_active`` and who activated it when may change: exactly one version per name is
active (a partial unique constraint; memos.services.governance.activate switches it in one transaction),
and a run started now pins the active ones (memos.services.governance.current_pins). A resumed run goes on
with the versions it pinned, whatever has been activated since.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q


class GovernedVersion(models.Model):
    """What prompt and rubric versions share: a name, a number, exact content and its sha256, provenance."""

    class Source(models.TextChoices):
        FILE = "file", "Seeded from its file"
        ADMIN = "admin", "Edited in the admin"

    name = models.CharField(max_length=80)
    version = models.PositiveIntegerField()
    content = models.TextField(help_text="exactly as written; version 1 is the file's bytes")
    content_hash = models.CharField(max_length=64, help_text="sha256 of the content's UTF-8 bytes")
    source = models.CharField(max_length=10, choices=Source.choices)
    source_path = models.CharField(
        max_length=200, blank=True, help_text="the seed file, from the project root"
    )
    note = models.CharField(max_length=300, blank=True, help_text="what changed and why")
    based_on = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="+", help_text="edited from"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    is_active = models.BooleanField(default=False)
    activated_at = models.DateTimeField(null=True, blank=True)
    # Null while the seeding command chose it; a person who activates a version takes the name over from the
    # files (seed_governance then stores a changed file's version without activating it, see there).
    activated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        abstract = True
        ordering: ClassVar = ["name", "-version"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}{' (active)' if self.is_active else ''}"

    @property
    def short_hash(self) -> str:
        return self.content_hash[:12]


class PromptVersion(GovernedVersion):
    """One version of one prompt file (Markdown with front matter, agents.llm.prompts)."""

    class Meta(GovernedVersion.Meta):
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["name", "version"], name="one_prompt_version_number_per_name"),
            models.UniqueConstraint(fields=["name", "content_hash"], name="one_prompt_version_per_content"),
            # The prompt a new run pins; memos.services.governance.activate relies on it to refuse a second.
            models.UniqueConstraint(
                fields=["name"], condition=Q(is_active=True), name="one_active_prompt_version_per_name"
            ),
        ]


class RubricVersion(GovernedVersion):
    """One version of one rubric (YAML, agents.rubrics): ``data`` is the parsed rubric, derived from
    ``content`` when the version was made, so pages and the deck workflow read dimensions, weights and
    thresholds without parsing YAML."""

    data = models.JSONField(help_text="the parsed rubric: scale, gates, objectives with weights, thresholds")
    # Adopting a run's proposal (memos.pipeline.deck.desk.rubric_proposals) copies a model's words into the
    # rubric. They stay marked, version after version of adoptions, until an admin saves an edited version,
    # whose words are all the admin's; memos.pipeline.deck.judging fences the marked anchors as untrusted
    # text.
    model_written_anchors = models.JSONField(
        default=list,
        blank=True,
        help_text="dimension keys whose anchor at 5 was adopted from a run's proposal (model-written) "
        "and not since saved by an admin: the judge reads them fenced, as untrusted text",
    )

    class Meta(GovernedVersion.Meta):
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["name", "version"], name="one_rubric_version_number_per_name"),
            models.UniqueConstraint(fields=["name", "content_hash"], name="one_rubric_version_per_content"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(is_active=True), name="one_active_rubric_version_per_name"
            ),
        ]
