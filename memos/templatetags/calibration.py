"""A deck run page's panels: the judge's agreement with the committee (memos.pipeline.deck.desk.gold_scores),
and why an escalated deck did not clear the entry bar (memos.pipeline.deck.desk.escalation)."""

from __future__ import annotations

from django import template

from agents.llm.roles import Role
from memos.models import Run
from memos.pipeline.deck.desk import escalation, gold_scores
from memos.pipeline.gateway import llm_settings

register = template.Library()


@register.simple_tag
def judge_agreement(run: Run) -> list[gold_scores.RubricAgreement]:
    """Each judge rubric the run pinned, with its figures once the committee has scored enough decks."""
    return gold_scores.agreement_rows(run.rubric_versions, llm_settings().endpoint_for(Role.SCORER).model)


@register.simple_tag
def deck_escalation(run: Run) -> escalation.Escalation | None:
    return escalation.escalation(run)
