"""The memo workflow's step documents, arranged for their templates from the typed step outputs.

Everything a model wrote stays a plain string here; the ``prose`` tag (templatetags.desk) splits it into
text, fact references and removed numbers and escapes it at render time. Rows and totals that need
arithmetic are computed here, so templates only lay them out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from agents.memo.outputs import (
    AuditOutput,
    EvaluationOutput,
    EvidenceOutput,
    IterationOutput,
    MemoOutput,
    SelfScore,
    SpecialistOutput,
)
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS, IterationGrade
from agents.text.repair import repaired_line
from memos.models import AgentStep, Run
from memos.pipeline.memo.plan import AUDIT, EVALUATION, EVIDENCE, ITERATION, MEMO, SPECIALIST
from memos.services.refs import Refs

CLAIM_LAYERS = ("MACRO", "MESO", "MICRO")


@dataclass(frozen=True)
class ScoreRow:
    dimension: str
    score: int | None
    calibrated: int | None = None
    inflation: int | None = None

    @property
    def label(self) -> str:
        return self.dimension.replace("_", " ")


@dataclass(frozen=True)
class ScoreTable:
    rows: list[ScoreRow]

    @property
    def total(self) -> int:
        return sum(row.score or 0 for row in self.rows)

    @property
    def calibrated_total(self) -> int:
        return sum(row.calibrated or 0 for row in self.rows)


def scores(model: BaseModel | None, dimensions: tuple[str, ...]) -> ScoreTable:
    return ScoreTable([ScoreRow(d, getattr(model, d) if model is not None else None) for d in dimensions])


def evidence_context(output: EvidenceOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    rows = [
        {
            "name": name,
            "title": SPECIALISTS[name].title if name in SPECIALISTS else name,
            "scope": SPECIALISTS[name].scope if name in SPECIALISTS else "",
            "facts": selection.facts,
            "documents": selection.documents,
            "ids": selection.ids,
        }
        for name, selection in output.specialists.items()
    ]
    return {"rows": rows, "data_version": output.data_version}


def specialist_context(output: SpecialistOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    groups = [(layer, [c for c in output.claims if c.layer == layer]) for layer in CLAIM_LAYERS]
    return {
        "specialist": SPECIALISTS.get(step.key),
        "groups": [(layer, claims) for layer, claims in groups if claims],
        "claim_count": len(output.claims),
        "evidence_quality": output.brief.evidence_quality,
        "coverage_gaps": output.brief.coverage_gaps,
        "undercurrents": output.brief.undercurrents,
        "dropped": output.dropped,
        "reasked": output.reasked,
        "asked_model": output.asked_model,
    }


def audit_context(output: AuditOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    return {
        "contradictions": output.contradictions,
        "tiers": [(tier, output.tiers.get(tier, 0)) for tier in ("HIGH", "MEDIUM", "LOW")],
        "contested_ids": output.contested_ids,
        "downgraded": output.downgraded,
        "claims": output.claims,
        "downgraded_keys": set(output.downgraded),
        "unsupported": output.unsupported_entities,
        "unsupported_statements": {(u.shard_id, u.statement) for u in output.unsupported_entities},
        "gap_grades": output.gap_grades,
        "invented": output.invented,
        "penalties": output.penalties,
        "claim_contradictions": output.claim_contradictions,
        "compared_with": output.compared_with,
        "directed": output.directed,
    }


def iteration_context(output: IterationOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    final = output.final
    attempts = [
        {
            "number": number,
            "hill_climb": attempt.hill_climb,
            "aperture": attempt.aperture,
            "headline": attempt.iteration.memo.headline_thesis,
            "correction": attempt.correction,
            "problems": attempt.problems,
        }
        for number, attempt in enumerate(output.attempts, 1)
    ]
    return {
        "analysis": final.analysis,
        "memo": final.memo,
        "what_i_missed": final.what_i_missed,
        "jplus": scores(final.self_jplus, JPLUS_DIMENSIONS),
        "jminus": scores(final.self_jminus, JMINUS_DIMENSIONS),
        "hill_climb": output.hill_climb,
        "rewritten": output.rewritten,
        "attempts": attempts,
        "gaps": output.gaps,
        "dropped_catalysts": output.dropped_catalysts,
        "escape": output.escape,
        "trimmed": output.trimmed,
    }


def _calibrated(
    own: BaseModel, graded: BaseModel | None, inflation: dict[str, int], dims: tuple[str, ...]
) -> ScoreTable:
    return ScoreTable(
        [
            ScoreRow(d, getattr(own, d), getattr(graded, d) if graded is not None else None, inflation.get(d))
            for d in dims
        ]
    )


def _per_iteration(self_scores: list[SelfScore], grades: dict[int, IterationGrade]) -> list[dict[str, Any]]:
    rows = []
    for entry in self_scores:
        grade = grades.get(entry.iteration)
        rows.append(
            {
                "iteration": entry.iteration,
                "self_jplus": entry.jplus.total,
                "self_jminus": entry.jminus.total,
                "jplus": grade.jplus.total if grade else None,
                "jminus": grade.jminus.total if grade else None,
            }
        )
    return rows


def evaluation_context(output: EvaluationOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    evaluation, verdict = output.evaluation, output.verdict
    grades = {grade.iteration: grade for grade in evaluation.grades}
    # The verdict is about the final iteration: its self-scores beside the evaluator's grade of it.
    last_self = output.self_scores[-1] if output.self_scores else None
    last_grade = (grades.get(last_self.iteration) if last_self else None) or (
        grades[max(grades)] if grades else None
    )
    quotes = output.quotes if len(output.quotes) == len(evaluation.divergences) else []
    context: dict[str, Any] = {
        "final_iteration": last_self.iteration if last_self else None,
        "per_iteration": _per_iteration(output.self_scores, grades),
        "divergences": evaluation.divergences,
        # each divergence beside code's check of its quote (none for a report written before the check)
        "checked": [
            (divergence, quotes[index] if quotes else None)
            for index, divergence in enumerate(evaluation.divergences)
        ],
        "trimmed": output.trimmed,
        "inflation_diagnosis": evaluation.inflation_diagnosis,
        "next_run_recommendation": evaluation.next_run_recommendation,
        "verdict": verdict,
        "recalibrated": verdict.recalibrated_hill_climb,
        # A second evaluator on another model: whose verdict was kept, the other's, and where they part ways.
        "kept_role": output.kept_role,
        "other": output.other,
        "disagreements": output.disagreements,
        "other_error": output.other_error,
    }
    if last_self is not None:
        context["jplus"] = _calibrated(
            last_self.jplus, last_grade.jplus if last_grade else None, verdict.inflation, JPLUS_DIMENSIONS
        )
        context["jminus"] = _calibrated(
            last_self.jminus, last_grade.jminus if last_grade else None, verdict.inflation, JMINUS_DIMENSIONS
        )
    return context


def memo_context(output: MemoOutput, step: AgentStep, refs: Refs) -> dict[str, Any]:
    memo, firewall = output.memo, output.firewall
    return {
        "memo": memo,
        "analysis": output.analysis,
        "firewall": firewall,
        "stated": firewall.stated,
        "final": firewall.final,
        "downgraded": firewall.final != firewall.stated,
        "load_bearing": [
            {
                "id": cid,
                "tier": output.tiers.get(cid) or refs.tier(cid) or "unresolved",
                "fact": refs.facts.get(cid),
                "document": refs.documents.get(cid),
            }
            for cid in memo.load_bearing
        ],
        "verdict": output.verdict,
        "numbers_removed": output.numbers_removed,
        "not_evaluated": output.not_evaluated,
        "evaluated": output.evaluated,
        "shown_catalysts": output.shown_catalysts,
        "dropped_catalysts": output.dropped_catalysts,
        "window": output.window,
        "withheld": output.withheld,
        "repaired": repaired_line(output.repairs),
        "iterations_run": output.iterations,
        "stopped_early": output.stopped_early,
        "falsifier_bindings": output.falsifier_bindings,
        "dropped_bindings": output.dropped_bindings,
    }


def evidence_ids(run: Run) -> set[str]:
    """What this run's documents may resolve: the evidence its data stage froze."""
    raw = (
        run.steps.filter(kind=EVIDENCE, status=AgentStep.Status.DONE).values_list("output", flat=True).first()
    )
    try:
        return EvidenceOutput.model_validate(raw).evidence_ids() if raw is not None else set()
    except ValidationError:
        return set()


BUILDERS: dict[str, Callable[[Any, AgentStep, Refs], dict[str, Any]]] = {
    EVIDENCE: evidence_context,
    SPECIALIST: specialist_context,
    AUDIT: audit_context,
    ITERATION: iteration_context,
    EVALUATION: evaluation_context,
    MEMO: memo_context,
}
