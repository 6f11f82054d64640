"""What the memo's later stages read from its earlier ones, typed: the frozen evidence, the specialists'
briefs, the audit, the synthesis iterations."""

from __future__ import annotations

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.catalysts import Window, window
from agents.memo.entities import declares_none
from agents.memo.outputs import AuditOutput, EvidenceOutput, IterationOutput, SpecialistOutput
from agents.memo.roster import SPECIALISTS, MemoConfig
from agents.memo.schemas import SynthesisIteration
from agents.text.blanks import blank_problem
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.inputs import brief_words
from memos.pipeline.memo.plan import AUDIT, DATA, EVIDENCE, ITERATION, SPECIALISTS_STAGE, SYNTHESIS


def config(ctx: StageContext) -> MemoConfig:
    return MemoConfig.model_validate(ctx.config)


def frozen_evidence(ctx: StageContext) -> EvidenceOutput:
    """Each specialist's evidence as the data stage froze it: every later (or resumed) stage reads exactly
    what the specialists were shown, even if the fact store changed since."""
    frozen = ctx.output(DATA, EVIDENCE, EvidenceOutput)
    if frozen is None:
        raise StageFailed("the data stage's evidence is missing: the run must start again")
    return frozen


def evidence(ctx: StageContext) -> dict[str, list[EvidenceItem]]:
    return frozen_evidence(ctx).by_specialist()


def catalog_of(by_specialist: dict[str, list[EvidenceItem]]) -> EvidenceCatalog:
    return EvidenceCatalog.of(item for items in by_specialist.values() for item in items)


def specialist_outputs(ctx: StageContext) -> dict[str, SpecialistOutput]:
    return ctx.outputs(SPECIALISTS_STAGE, SpecialistOutput)


def audit_output(ctx: StageContext) -> AuditOutput:
    found = ctx.output(SYNTHESIS, AUDIT, AuditOutput)
    if found is None:
        raise StageFailed("the fact-stability audit is missing: the synthesis stage did not finish")
    return found


def iterations(ctx: StageContext) -> list[SynthesisIteration]:
    return [step.final for step in ctx.outputs(SYNTHESIS, IterationOutput, kind=ITERATION).values()]


def briefs_text(outputs: dict[str, SpecialistOutput], audit: AuditOutput) -> str:
    """The briefs as the synthesizer and the evaluator read them, claims at their audited tiers."""
    parts = []
    for name, output in outputs.items():
        lines = [f"== {SPECIALISTS[name].title} (evidence quality: {output.brief.evidence_quality})"]
        lines += [
            f"- [{c.layer}] [{c.tier}] {c.statement} (cites {', '.join(c.citations)})"
            for c in audit.claims
            if c.shard_id == name
        ]
        lines += [f"- coverage gap: {gap}" for gap in output.brief.coverage_gaps if _readable_gap(gap)]
        lines += [f"- undercurrent: {u}" for u in output.brief.undercurrents if not blank_problem(u)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _readable_gap(gap: str) -> bool:
    """A gap worth the synthesizer's reading: not one that says there is none, nor one the reader rules would
    withhold. Shown such lines, the embedded 1.5B copied them into its memo: "The analyst did not find any
    coverage gaps for this question" into four sections, "The analyst's brief does not provide ..." into
    all of them."""
    return not declares_none(gap) and not blank_problem(gap)


def catalyst_window(ctx: StageContext) -> Window | None:
    """After the data's as-of date, within the horizon the brief names (or the default)."""
    return window(frozen_evidence(ctx).as_of, "\n".join(brief_words(ctx)))
