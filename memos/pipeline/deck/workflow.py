"""The C-suite deck (seed 001) as a workflow of the run engine: scope, data, draft and the R1 gate, the R2
refinement loop, and the deck frozen for review. The orchestration is this code (seed 001 O0): it routes
and never writes content; every word comes from an LLM role, every figure and every verdict from code."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from agents.deck.outputs import BaselineOutput, DeckEvidence, DeckOutput, DraftOutput, LapOutput, ScopeOutput
from agents.deck.render.pptx import widened_template
from agents.deck.rubrics import DECK_R1, DECK_R2, R1_CONTRACT, R2_CONTRACT
from agents.llm.roles import Role
from memos.models import AgentStep
from memos.pipeline.deck import plan as deck_plan
from memos.pipeline.deck import profiles
from memos.pipeline.deck.breadths import JUDGEMENTS, SLIDES
from memos.pipeline.deck.data import run_data
from memos.pipeline.deck.draft import run_draft
from memos.pipeline.deck.final import deck_artefact, ending, run_deck
from memos.pipeline.deck.plan import BASELINE, DECK, DRAFT_KIND, FIGURES, LAP, RUBRIC, SCOPE
from memos.pipeline.deck.reader import deck_reader_text
from memos.pipeline.deck.refine import run_refine
from memos.pipeline.deck.scope import run_scope
from memos.pipeline.deck.warm import warm_prompts
from memos.pipeline.judge_families import Judged
from memos.pipeline.reader_text import REASKS
from memos.pipeline.workflows import Stage, StepKind, Workflow

TEMPLATES = "memos/step_documents/deck"


def _scope(output: ScopeOutput) -> str:
    scope = output.scope
    return f"{len(scope.required_sections)} sections · {len(scope.key_questions)} key questions"


def _rubric(output: ScopeOutput) -> str:
    if output.proposal is None:
        return "no brief-specific anchors: the governed ones apply"
    return f"{len(output.proposal.descriptors)} brief-specific anchors proposed"


def _figures(output: DeckEvidence) -> str:
    return f"{len(output.figures)} figures" + (f" · as of {output.as_of}" if output.as_of else "")


def _draft(output: DraftOutput) -> str:
    failed = [gate.key.replace("_", " ") for gate in output.r1.gates if not gate.passed]
    verdict = "cleared R1" if output.r1.passed else "failed R1"
    detail = f"gates failed: {', '.join(failed)}" if failed else f"composite {output.r1.composite:.2f}"
    return f"{verdict} · {detail} · {len(output.candidate.deck.slides)} slides"


def _baseline(output: BaselineOutput) -> str:
    return f"R2 {output.scored.composite:.2f} · epoch {output.epoch.rubric_version}"


def _lap(output: LapOutput) -> str:
    order = output.work_order
    head = (
        f"{order.action.replace('_', ' ')} → {order.target.replace('_', ' ')}" if order else "no work order"
    )
    verdict = "accepted" if output.decision.accepted else "rejected"
    line = f"{head} · {verdict} ({output.decision.margin:+.2f}) · best R2 {output.best:.2f}"
    return line + (f" · drift on {len(output.drift)}" if output.drift else "")


def _deck(output: DeckOutput) -> str:
    if output.escalated:
        return "escalated: can't clear the entry bar"
    r2 = output.r2.composite if output.r2 is not None else 0.0
    return f"{len(output.deck.slides)} slides · R2 {r2:.2f} · {output.laps} laps"


def calibration_notices(steps: Sequence[AgentStep]) -> list[str]:
    """Seed 001 section 2 on the run page: an uncalibrated judge's improvements may be its own variance."""
    for step in steps:
        if step.kind == BASELINE and step.status == AgentStep.Status.DONE:
            try:
                calibrated = BaselineOutput.model_validate(step.output).calibrated
            except ValidationError:
                return []
            if calibrated is False:
                return [
                    "The judge's R2 rubric is not calibrated against human gold scores for the scorer model "
                    "in use: the loop's improvements may be the judge's own variance. Committee members "
                    "score decks on their version pages (an admin may add gold scores in the admin); from "
                    "five scored decks the judge is compared with them."
                ]
            return []
    return []


WORKFLOW = Workflow(
    name=deck_plan.NAME,
    choice="Deck: a C-suite slide deck, refined by a scored loop",
    subject="company",
    stages=(
        Stage(
            deck_plan.SCOPE,
            "Scope",
            "The brief frozen into sections and questions; rubric anchors",
            run_scope,
        ),
        Stage(deck_plan.DATA, "Data", "Figures picked by code from the fact store", run_data),
        Stage(
            deck_plan.DRAFT,
            "Draft and R1 gate",
            "Drafted, rendered, fact-checked, linted, graded",
            run_draft,
            fan_outs=(SLIDES, REASKS),
        ),
        Stage(
            deck_plan.REFINE,
            "Refinement",
            "Each lap: work order, revision, checks, judge; code decides",
            run_refine,
            fan_outs=(JUDGEMENTS,),
        ),
        Stage(deck_plan.DECK, "Deck", "The best so far, frozen for review", run_deck),
    ),
    kinds={
        SCOPE: StepKind(SCOPE, ScopeOutput, f"{TEMPLATES}/scope.html", _scope),
        RUBRIC: StepKind(RUBRIC, ScopeOutput, f"{TEMPLATES}/rubric.html", _rubric),
        FIGURES: StepKind(FIGURES, DeckEvidence, f"{TEMPLATES}/figures.html", _figures),
        DRAFT_KIND: StepKind(DRAFT_KIND, DraftOutput, f"{TEMPLATES}/draft.html", _draft),
        BASELINE: StepKind(BASELINE, BaselineOutput, f"{TEMPLATES}/baseline.html", _baseline),
        LAP: StepKind(LAP, LapOutput, f"{TEMPLATES}/lap.html", _lap),
        DECK: StepKind(DECK, DeckOutput, f"{TEMPLATES}/deck.html", _deck),
    },
    plan=deck_plan.plan,
    ending=ending,
    profiles=profiles.profiles,
    configure=profiles.configure,
    describe=profiles.describe,
    notices=calibration_notices,
    # Seed 001 rule 1, Reviewer != Reviser: the scorer (the judge and its gate) grades the drafts and the
    # revisions.
    verdicts=(
        Judged(
            Role.SCORER,
            (Role.DRAFTER, Role.PLANNER, Role.REVISER),
            "the judge's scores",
            "the drafts and their revisions",
        ),
    ),
    run_banner="memos/decks/run_banner.html",
    artefact=deck_artefact,
    rubrics={DECK_R1: R1_CONTRACT, DECK_R2: R2_CONTRACT},
    fakes="agents.deck.fakes",
    surface="memos.pipeline.deck.desk",
    reader_text=deck_reader_text,
    sealed_kinds=frozenset({DRAFT_KIND, BASELINE, LAP, DECK}),
    # The rubric builder's prompt names its anchors: it is read on the run's first call of it.
    warm_prompts=warm_prompts,
    warm_process=widened_template,
)
