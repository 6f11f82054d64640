"""A deck run page's panels: the judge's agreement with the committee (memos.services.gold_scores), and why
an escalated deck did not clear the entry bar (memos.services.deck_escalation)."""

from __future__ import annotations

from django import template

from agents.llm.roles import Role
from memos.models import Run
from memos.pipeline.gateway import llm_settings
from memos.services.deck_escalation import Escalation, escalation
from memos.services.gold_scores import RubricAgreement, agreement_rows

register = template.Library()


@register.simple_tag
def judge_agreement(run: Run) -> list[RubricAgreement]:
    """Each judge rubric the run pinned, with its figures once the committee has scored enough decks."""
    return agreement_rows(run.rubric_versions, llm_settings().endpoint_for(Role.SCORER).model)


@register.simple_tag
def deck_escalation(run: Run) -> Escalation | None:
    return escalation(run)
