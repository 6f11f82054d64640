"""The critiqued fan-in memo (seed 000) as a workflow of the run engine: five stages, six kinds of step."""

from __future__ import annotations

from agents.llm.roles import Role
from agents.memo.outputs import (
    AuditOutput,
    EvaluationOutput,
    EvidenceOutput,
    IterationOutput,
    MemoOutput,
    SpecialistOutput,
)
from agents.memo.rubric import MEMO_CONTRACT, MEMO_RUBRIC
from memos.models import Run
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.judge_families import Judged
from memos.pipeline.memo import plan as memo_plan
from memos.pipeline.memo import profiles
from memos.pipeline.memo.artefact import memo_artefact
from memos.pipeline.memo.breadths import EVALUATORS, SPECIALIST_BRIEFS
from memos.pipeline.memo.data import run_data
from memos.pipeline.memo.evaluation import run_evaluation
from memos.pipeline.memo.memo import run_memo
from memos.pipeline.memo.plan import AUDIT, EVALUATION, EVIDENCE, ITERATION, MEMO, SPECIALIST
from memos.pipeline.memo.reader import memo_reader_text
from memos.pipeline.memo.rehearsal import script_for_run
from memos.pipeline.memo.specialists import run_specialists
from memos.pipeline.memo.synthesis import run_synthesis
from memos.pipeline.memo.warm import warm_prompts
from memos.pipeline.memo.watches import open_watches
from memos.pipeline.reader_text import REASKS
from memos.pipeline.workflows import Ending, Stage, StepKind, Workflow

TEMPLATES = "memos/step_documents/memo"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _evidence(output: EvidenceOutput) -> str:
    return f"evidence for {_plural(len(output.specialists), 'specialist')}"


def _specialist(output: SpecialistOutput) -> str:
    if not output.asked_model:
        return "no evidence: not asked"
    line = f"{_plural(len(output.claims), 'claim')} · {output.brief.evidence_quality} evidence"
    return line + (f" · {len(output.dropped)} dropped" if output.dropped else "")


def _audit(output: AuditOutput) -> str:
    line = f"{_plural(len(output.contradictions), 'contradiction')} · {output.tiers.get('LOW', 0)} LOW"
    unsupported = len(output.unsupported_entities)
    return line + (f" · {unsupported} unsupported by its sources" if unsupported else "")


def _iteration(output: IterationOutput) -> str:
    check = output.hill_climb
    line = f"J+ {check.jplus} · J− {check.jminus}" + (" · rewritten" if output.rewritten else "")
    unanswered = sum(1 for gap in output.gaps if not gap.answered)
    if output.gaps:
        line += f" · {_plural(unanswered, 'gap')} unanswered" if unanswered else " · every gap answered"
    if output.dropped_catalysts:
        line += f" · {_plural(len(output.dropped_catalysts), 'catalyst')} dropped"
    return line + (" · thresholds met: stopped here" if output.escape and output.escape.stop else "")


def _evaluation(output: EvaluationOutput) -> str:
    verdict = output.verdict
    line = f"{verdict.decision} · J+ {verdict.calibrated_jplus} · J− {verdict.calibrated_jminus}"
    missing = sum(1 for quote in output.quotes if not quote.found)
    line += f" · {_plural(missing, 'quote')} not found" if missing else ""
    return line + (" · same family" if output.same_model_warning else "")


def _memo(output: MemoOutput) -> str:
    decision = output.firewall
    moved = f"{decision.stated} → " if decision.final != decision.stated else ""
    line = f"{moved}{decision.final}" + (" · conditional" if decision.conditional else "")
    return line + ("" if output.evaluated else " · not evaluated")


def ending(ctx: StageContext) -> Ending:
    """Done when the evaluator's calibrated scores accept the memo; otherwise the memo is kept and the run
    waits for a person (needs review), with the verdict's reason and the recommendation for the next run.
    A memo the evaluator could not grade waits too, marked not evaluated, until its evaluation is re-run."""
    memo = ctx.output(MEMO, MEMO, MemoOutput)
    if memo is None:
        raise StageFailed("the memo step did not finish")
    verdict = memo.verdict
    if verdict is None:
        return Ending(
            Run.Status.NEEDS_REVIEW,
            "memo ready, not evaluated: the evaluation failed, so the memo cannot be voted on or published "
            "until an evaluation succeeds. Re-run the evaluation from the run page.",
        )
    if verdict.decision == "ACCEPT":
        return Ending(Run.Status.DONE, f"memo ready: {verdict.reason}")
    # Code's words only: the evaluator's advice for the next run is model-written, so it is shown in its
    # report through the same filter as all model prose, not in the status line.
    return Ending(
        Run.Status.NEEDS_REVIEW,
        f"memo ready, evaluator says revise: {verdict.reason}. "
        "Next run: the evaluator's report says what to change.",
    )


# The evaluator judges the specialists' briefs and the synthesizer's memo (seed 000's rubber-stamp risk).
MEMO_WRITERS = (
    Role.FUNDAMENTALS,
    Role.COMPETITIVE,
    Role.MACRO,
    Role.REGULATORY,
    Role.QUANT,
    Role.NEWS,
    Role.SYNTHESIZER,
)


WORKFLOW = Workflow(
    name=memo_plan.NAME,
    choice="Investment memo",
    subject="company",
    stages=(
        Stage(
            memo_plan.DATA, "Data", "Evidence gathered by code: filed figures, prices and documents", run_data
        ),
        Stage(
            memo_plan.SPECIALISTS_STAGE,
            "Specialists",
            "Each reads only its own evidence and must cite it",
            run_specialists,
            fan_outs=(SPECIALIST_BRIEFS,),
        ),
        Stage(
            memo_plan.SYNTHESIS,
            "Synthesis",
            "A fact-stability audit, then iterations under the hill-climb rule",
            run_synthesis,
        ),
        Stage(
            memo_plan.EVALUATION,
            "Evaluation",
            "A separate model grades every iteration",
            run_evaluation,
            fan_outs=(EVALUATORS,),
        ),
        Stage(
            memo_plan.MEMO,
            "Memo",
            "Code renders every figure, asks the writer again about what it would withhold, applies the "
            "firewall",
            run_memo,
            fan_outs=(REASKS,),
        ),
    ),
    kinds={
        EVIDENCE: StepKind(EVIDENCE, EvidenceOutput, f"{TEMPLATES}/evidence.html", _evidence),
        SPECIALIST: StepKind(SPECIALIST, SpecialistOutput, f"{TEMPLATES}/specialist.html", _specialist),
        AUDIT: StepKind(AUDIT, AuditOutput, f"{TEMPLATES}/audit.html", _audit),
        ITERATION: StepKind(ITERATION, IterationOutput, f"{TEMPLATES}/iteration.html", _iteration),
        EVALUATION: StepKind(EVALUATION, EvaluationOutput, f"{TEMPLATES}/evaluation.html", _evaluation),
        MEMO: StepKind(MEMO, MemoOutput, f"{TEMPLATES}/memo.html", _memo),
    },
    plan=memo_plan.plan,
    ending=ending,
    profiles=profiles.profiles,
    configure=profiles.configure,
    describe=profiles.describe,
    verdicts=(
        Judged(
            Role.EVALUATOR,
            MEMO_WRITERS,
            "the evaluator's grades",
            "the specialists' briefs and the synthesizer's memo",
        ),
    ),
    artefact=memo_artefact,
    on_frozen=open_watches,
    rubrics={MEMO_RUBRIC: MEMO_CONTRACT},
    run_banner=f"{TEMPLATES}/rerun_evaluation.html",
    surface="memos.pipeline.memo.desk",
    rehearsal=script_for_run,
    reader_text=memo_reader_text,
    warm_prompts=warm_prompts,
)
