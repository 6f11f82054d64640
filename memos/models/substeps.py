"""A sub-step of a stage that any free worker may take (the agency's moves, one debate each): the columns by
which one worker at a time holds it. The engine claims, fences and beats them (memos.pipeline.substeps)."""

from __future__ import annotations

from django.db import models

from memos.models.runs import Run


class ClaimedSubStep(models.Model):
    """A row of a stage's work held by one worker at a time: ``worker`` names the holder, ``heartbeat_at``
    says it is alive, and ``lease`` is the fencing token of the latest claim, which every write under the
    claim is checked against, so a worker presumed dead cannot write over the one that took the row over.

    Abstract: each kind of sub-step is a table of its own, with these columns beside its own.
    """

    # A run reaches its rows of a kind by the kind's plural: ``run.moves`` for Move.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="%(class)ss")
    worker = models.CharField(max_length=200, blank=True, help_text="who holds it (host:pid)")
    lease = models.PositiveIntegerField(default=0, help_text="fencing token of the latest claim")
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
