"""Refinement cycles of a deck brief (seed 001, "G2 refinement cycle, up to 2x/day"): a deck run that
continues from the brief's latest deck version. The scheduler (memos.services.schedules) starts them; so may
a person. A second cycle while one runs is refused by the one-active-run-per-brief rule; a cycle that finds
the best already at the ship bar with no new data and no new rubric makes no LLM call and freezes nothing."""

from __future__ import annotations

from django.db import transaction

from memos.models import ArtefactVersion, Brief, Run
from memos.services.errors import ServiceError
from memos.services.runs import start_run
from memos.services.versions import latest_in_line

DECK = "deck"


def latest_deck(brief: Brief) -> ArtefactVersion | None:
    """The head of the brief's deck line, which a cycle continues from (a memo beside it is another line)."""
    return latest_in_line(brief, DECK)


def start_cycle(brief: Brief, *, enqueue: bool = True) -> Run:
    """Start a cycle on the brief's latest deck version, as the brief's owner; ServiceError says why not."""
    base = latest_deck(brief)
    if base is None:
        raise ServiceError(f"{brief} has no deck version yet: a refinement cycle continues from one.")
    if base.scores.get("escalated"):
        raise ServiceError(
            f"{base.label} never cleared the entry bar: there is nothing to refine; start a new deck run."
        )
    profile = Run.objects.filter(pk=base.run_id).values_list("profile", flat=True).first() or "quick"
    with transaction.atomic():
        run = start_run(brief, user=brief.owner, profile=profile, workflow=Run.Workflow.DECK, enqueue=enqueue)
        run.config = {**run.config, "base_version": base.pk}
        run.save(update_fields=["config"])
    return run
