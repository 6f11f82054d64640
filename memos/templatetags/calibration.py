"""A deck run page's panels: the judge's agreement with the committee (memos.pipeline.deck.desk.gold_scores),
and why an escalated deck did not clear the entry bar (memos.pipeline.deck.desk.escalation)."""

from __future__ import annotations

from django import template

from memos.models import Run
from memos.pipeline.deck.desk import configured_scorer, escalation, gold_scores

register = template.Library()


@register.simple_tag
def judge_agreement(run: Run) -> list[gold_scores.RubricAgreement]:
    """Each judge rubric the run pinned, with its figures once the committee has scored enough decks."""
    return gold_scores.agreement_rows(run.rubric_versions, configured_scorer())


@register.simple_tag
def deck_escalation(run: Run) -> escalation.Escalation | None:
    return escalation.escalation(run)
