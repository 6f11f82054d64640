"""Why an escalated deck did not clear the entry bar, and what the analyst can do about it, for the run page.

Read from the run's own steps: the deck it delivered (the closest draft), the R1 gates it missed, the scores
code capped and why, and the scope step's warning that the judge shares the drafter's model. The advice is
code's, drawn from those facts only: another judge model where the judge is the drafter's own, the full
profile where the quick one left rebuilds unused, and the specific gate to look at.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from pydantic import ValidationError

from agents.deck.outputs import DeckOutput, ScopeOutput
from agents.deck.profile import DECK_PROFILES, DeckConfig
from memos.models import AgentStep, Run
from memos.pipeline.deck.plan import DECK, SCOPE

GATE_ADVICE = {
    "source_of_truth": "a figure on a slide does not match the fact store, or cites an id the run was not "
    "given: the draft's fact-check lines below name it",
    "scope_coverage": "a required section has no slide with words: a larger model, or a scope with fewer "
    "sections, gives each section its slide",
    "structural_validity": "a slide is broken (text overflows its box, or is empty): the lint lines below "
    "name the slide and the box",
}


@dataclass(frozen=True)
class Escalation:
    composite: float
    entry_bar: float
    missed: list[tuple[str, str]]  # (gate, code's reason)
    low: list[tuple[str, int]]  # graded dimensions below 3, lowest first
    ceilings: list[str]  # scores code capped, with why
    advice: list[str] = field(default_factory=list)


def escalation(run: Run) -> Escalation | None:
    """What the run page says of an escalated deck run; None for any other run."""
    steps = {
        step.key: step.output
        for step in AgentStep.objects.filter(run=run, key__in=(DECK, SCOPE), status=AgentStep.Status.DONE)
    }
    try:
        output = DeckOutput.model_validate(steps[DECK])
    except (KeyError, ValidationError):
        return None
    if not output.escalated:
        return None
    r1 = output.r1
    missed = [(gate.key.replace("_", " "), gate.reason) for gate in r1.gates if not gate.passed]
    low = sorted(
        ((key.replace("_", " "), score) for key, score in r1.scores.items() if score < 3), key=lambda x: x[1]
    )
    advice = []
    warning = ""
    with contextlib.suppress(KeyError, ValidationError):
        warning = ScopeOutput.model_validate(steps[SCOPE]).same_model_warning
    if warning:
        advice.append(
            "Give the judge a model of another family (LLM_JUDGE_MODEL, or LLM_MODEL_SCORER for the deck's "
            "judge alone): it grades its own family's words now, and a small model grades them low and "
            "unevenly."
        )
    else:
        advice.append(
            "The judge already has a model of its own: a larger drafting model (LLM_MODEL_DRAFTER and "
            "LLM_MODEL_REVISER) is the next lever."
        )
    try:
        config = DeckConfig.model_validate(run.config)
    except ValidationError:
        config = None
    if config is not None and config.name != "full":
        rebuilds = DECK_PROFILES["full"][0]
        advice.append(
            f"Start the full profile: up to {rebuilds} rebuilds of the draft, each told what failed "
            f"(this {config.name} run had {config.max_rebuilds})."
        )
    advice.extend(
        f"{gate.key.replace('_', ' ')}: {GATE_ADVICE[gate.key]}."
        for gate in r1.gates
        if not gate.passed and gate.key in GATE_ADVICE
    )
    if r1.ceilings:
        advice.append(
            "Code capped scores it measured otherwise (listed above): slides that repeat each other or "
            "carry a wall of text cost more than any wording."
        )
    return Escalation(
        composite=r1.composite,
        entry_bar=r1.entry_bar,
        missed=missed,
        low=low,
        ceilings=list(r1.ceilings),
        advice=advice,
    )
