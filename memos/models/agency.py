"""The agency's debate (seed 004's sandbox) as rows: the moves a run debates, every turn of every thread,
and every score a board member gave.

A turn is written the moment its answer arrives, under its move's fencing token (memos.pipeline.substeps), so
a killed worker loses at most the calls in flight, and a resumed debate goes on from the rows. The JSON
threads (i1, i2, i3) are a view over these rows. Each turn and score keeps the prompt version it was asked
with and the request hash of the LLM call that paid for it (memos.models.ledger.LLMCall.request_hash).
"""

from __future__ import annotations

from typing import ClassVar

from django.db import models
from django.db.models import Q

from memos.models.substeps import ClaimedSubStep


class Move(ClaimedSubStep):
    """A move the analysts proposed (m1..m15 in the order proposed). A duplicate (the same dedup key as an
    earlier move) is kept, ``merged_into`` the move that is debated for both.

    A move's debate is a sub-step any free worker may take (memos.pipeline.substeps, run by
    memos.pipeline.agency.sandbox): ``worker``, ``heartbeat_at`` and ``lease`` (ClaimedSubStep) say who
    holds it, and every turn it writes is checked against the lease.
    ``debated_at`` is set once its final scores are written; ``failure`` once it cannot be debated.
    """

    class Risk(models.TextChoices):
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    move_id = models.CharField(max_length=8)
    number = models.PositiveSmallIntegerField()
    persona = models.CharField(max_length=40)
    risk = models.CharField(max_length=6, choices=Risk.choices)
    title = models.CharField(max_length=200)
    dedup_key = models.CharField(max_length=200)
    credited = models.JSONField(default=list, help_text="every persona that proposed it")
    merged_into = models.CharField(max_length=8, blank=True, help_text="the move debated in its place")
    debated_at = models.DateTimeField(null=True, blank=True, help_text="when its final scores were written")
    failure = models.TextField(blank=True, help_text="why it could not be debated")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["run", "number"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["run", "move_id"], name="one_move_id_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.move_id}: {self.title[:60]}"

    @property
    def debated(self) -> bool:
        return not self.merged_into


class DebateTurn(models.Model):
    """One turn of one thread. Round 1's critique is one turn on every thread (``thread`` "all")."""

    class Thread(models.TextChoices):
        ALL = "all", "i1, i2 and i3"
        I1 = "i1"
        I2 = "i2"
        I3 = "i3"

    class Speaker(models.TextChoices):
        CRITIC = "critic"
        D1 = "d1"
        D2 = "d2"
        D3 = "d3"

    class Position(models.TextChoices):
        SUPPORT = "support"
        CONDITIONAL = "conditional"
        OPPOSE = "oppose"

    move = models.ForeignKey(Move, on_delete=models.CASCADE, related_name="turns")
    thread = models.CharField(max_length=3, choices=Thread.choices)
    round = models.PositiveSmallIntegerField()
    speaker = models.CharField(max_length=6, choices=Speaker.choices)
    text = models.TextField(help_text="what a reader is shown: typed figures withheld, references kept")
    note = models.CharField(max_length=300, blank=True, help_text="code's line on what it withheld")
    citations = models.JSONField(default=list, blank=True)
    # A board member's turn: the critic's point it answers, quoted (and whether code found the quote), its
    # position, and whether the position changed since its last turn and what moved it.
    answers = models.TextField(blank=True)
    answers_found = models.BooleanField(null=True)
    position = models.CharField(max_length=12, choices=Position.choices, blank=True)
    changed = models.BooleanField(default=False)
    moved_by = models.TextField(blank=True, help_text="code's record of what the change cited")
    change_supported = models.BooleanField(null=True)
    prompt_name = models.CharField(max_length=80)
    prompt_version = models.PositiveIntegerField()
    prompt_hash = models.CharField(max_length=64)
    request_hash = models.CharField(max_length=64, help_text="the ledger's key for the call that wrote it")
    worker = models.CharField(max_length=200, blank=True, help_text="the worker that wrote it (host:pid)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["move", "round", "speaker", "thread"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["move", "thread", "round", "speaker"], name="one_turn_per_slot"),
            models.CheckConstraint(
                condition=Q(speaker="critic") | ~Q(position=""), name="a_board_turn_takes_a_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.move.move_id} {self.thread} r{self.round} {self.speaker}"


class MoveScore(models.Model):
    """A board member's four scores of a move: blind (before round 1, without the debate) or final."""

    class Phase(models.TextChoices):
        BLIND = "blind"
        FINAL = "final"

    move = models.ForeignKey(Move, on_delete=models.CASCADE, related_name="scores")
    member = models.CharField(max_length=2)
    phase = models.CharField(max_length=5, choices=Phase.choices)
    impact = models.PositiveSmallIntegerField()
    feasibility = models.PositiveSmallIntegerField()
    risk_adjusted_return = models.PositiveSmallIntegerField()
    strategic_alignment = models.PositiveSmallIntegerField()
    card = models.JSONField(help_text="the scores with their quotes and reasons, as checked by code")
    prompt_name = models.CharField(max_length=80)
    prompt_version = models.PositiveIntegerField()
    prompt_hash = models.CharField(max_length=64)
    request_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["move", "phase", "member"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["move", "member", "phase"], name="one_score_per_member_phase"),
            models.CheckConstraint(
                condition=Q(impact__lte=10)
                & Q(feasibility__lte=10)
                & Q(risk_adjusted_return__lte=10)
                & Q(strategic_alignment__lte=10),
                name="scores_out_of_ten",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.move.move_id} {self.member} {self.phase}: {self.total}/40"

    @property
    def total(self) -> int:
        return self.impact + self.feasibility + self.risk_adjusted_return + self.strategic_alignment
