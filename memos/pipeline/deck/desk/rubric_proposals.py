"""Adopting the rubric builder's brief-specific anchors (seed 001 L2): an admin turns a deck run's proposal
into the next version of the governed R1 and R2 rubrics, where a proposal's dimension is one of theirs.

Only the "what a 5 looks like" anchor of a named dimension changes; weights, thresholds, gates and the other
anchors stay as the active version has them. The new versions go through the same checks an admin edit does
(memos.services.governance.propose_rubric) and are activated, so the next run pins them; runs in flight keep
the versions they pinned.

An adopted anchor is still a model's words, and an admin adopting a proposal has not necessarily read it:
the new version marks it (``RubricVersion.model_written_anchors``, with the base version's marks carried
along), and the judge reads marked anchors fenced as untrusted text (memos.pipeline.deck.judging) until an
admin saves an edited version of the rubric in the admin.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.contrib.auth.models import User

from agents.deck.outputs import ScopeOutput
from agents.deck.rubrics import DECK_R1, DECK_R2, PROPOSED_ANCHOR
from memos.models import AgentStep, RubricVersion
from memos.services import governance
from memos.services.errors import ServiceError

TOP_ANCHOR = PROPOSED_ANCHOR


def adopt_proposal(*, step: AgentStep, user: User) -> list[RubricVersion]:
    if not (user.is_active and user.is_superuser):
        raise ServiceError("Only an administrator may adopt rubric anchors.")
    try:
        proposal = ScopeOutput.model_validate(step.output).proposal if step.kind == "rubric" else None
    except ValueError:
        proposal = None
    if proposal is None:
        raise ServiceError("This step holds no rubric proposal to adopt.")
    anchors: dict[str, str] = {d.dimension: d.five for d in proposal.descriptors}
    adopted: list[RubricVersion] = []
    for name in (DECK_R1, DECK_R2):
        base = RubricVersion.objects.filter(name=name, is_active=True).first()
        if base is None:
            raise ServiceError(f"No active {name} version to build on; run manage.py seed_governance.")
        content, changed = _with_anchors(base.content, anchors)
        if not changed:
            continue
        # The note's wording is what migration 0013 reads to mark versions adopted before the marks existed.
        note = f"anchors adopted from run {str(step.run_id)[:8]}: {', '.join(changed)}"
        version = governance.propose_rubric(
            base=base,
            content=content,
            user=user,
            note=note,
            model_written_anchors=[*base.model_written_anchors, *changed],
        )
        governance.activate(version=version, user=user)
        adopted.append(version)
    if not adopted:
        raise ServiceError("None of the proposed dimensions is in the deck rubrics; nothing to adopt.")
    return adopted


def _with_anchors(content: str, anchors: dict[str, str]) -> tuple[str, list[str]]:
    data: dict[str, Any] = yaml.safe_load(content)
    changed: list[str] = []
    for objective in data.get("objectives", []):
        for dimension in objective.get("dimensions", []):
            text = anchors.get(dimension.get("key", ""))
            if text and dimension.get("anchors", {}).get(TOP_ANCHOR) != text:
                dimension.setdefault("anchors", {})[TOP_ANCHOR] = text
                changed.append(dimension["key"])
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), changed
