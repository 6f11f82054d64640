"""A step's document: the output the pipeline stored (JSON) arranged for a template.

Everything a model wrote stays a plain string here; the ``prose`` tag in templatetags.desk splits it into
text, fact references and removed numbers and escapes it at render time. Rows and totals that need
arithmetic are computed here so templates only lay them out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.memo.evidence import document_tier, fact_tier
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS
from agents.memo.textrefs import fact_ids_in
from memos.models import AgentStep, FactRecord, Run, SourceDocument

CLAIM_LAYERS = ("MACRO", "MESO", "MICRO")
# Longest id we bother looking up: anything longer in an output is prose, not an evidence id.
MAX_ID_CHARS = 120


@dataclass(frozen=True)
class Refs:
    """The facts and documents a document's ids resolve to. ``known`` is what prose may reference: the
    facts this run was given as evidence (the same set the memo stage counted removed numbers against)."""

    facts: Mapping[str, FactRecord]
    documents: Mapping[str, SourceDocument]
    known: frozenset[str]

    def tier(self, evidence_id: str) -> str:
        if (fact := self.facts.get(evidence_id)) is not None:
            return fact_tier(fact.source)
        if (document := self.documents.get(evidence_id)) is not None:
            return document_tier(document.kind)
        return ""


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


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def candidate_ids(outputs: Iterable[object]) -> set[str]:
    """Every string that could be an evidence id, and every ``[[fact id]]`` inside prose."""
    found: set[str] = set()
    for output in outputs:
        for text in _strings(output):
            if len(text) <= MAX_ID_CHARS and " " not in text:
                found.add(text)
            found.update(fact_ids_in(text))
    return found


def run_evidence_ids(run: Run) -> set[str]:
    step = AgentStep.objects.filter(run=run, layer=AgentStep.Layer.DATA, key="evidence").first()
    output = step.output if step is not None and isinstance(step.output, dict) else {}
    specialists = output.get("specialists", {})
    return {str(i) for entry in specialists.values() if isinstance(entry, dict) for i in entry.get("ids", [])}


def refs_for(run: Run, outputs: Iterable[object]) -> Refs:
    ids = candidate_ids(outputs)
    facts = {fact.fact_id: fact for fact in FactRecord.objects.filter(fact_id__in=ids)}
    documents = {doc.doc_id: doc for doc in SourceDocument.objects.filter(doc_id__in=ids)}
    evidence = run_evidence_ids(run)
    return Refs(facts, documents, frozenset(fact_id for fact_id in facts if fact_id in evidence))


def scores(values: Mapping[str, Any], dimensions: tuple[str, ...]) -> ScoreTable:
    return ScoreTable([ScoreRow(d, _int(values.get(d))) for d in dimensions])


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


# --- one builder per kind of document


def kind_of(step: AgentStep) -> str:
    if step.status != AgentStep.Status.DONE or not isinstance(step.output, dict):
        return "unfinished"
    if step.layer == AgentStep.Layer.SYNTHESIS:
        return "audit" if step.key == "audit" else "iteration"
    kinds: dict[str, str] = {
        AgentStep.Layer.DATA: "evidence",
        AgentStep.Layer.SPECIALISTS: "specialist",
        AgentStep.Layer.EVALUATION: "evaluation",
        AgentStep.Layer.MEMO: "memo",
    }
    return kinds.get(step.layer, "unfinished")


def evidence_context(output: dict[str, Any]) -> dict[str, Any]:
    rows = [
        {
            "name": name,
            "title": SPECIALISTS[name].title if name in SPECIALISTS else name,
            "scope": SPECIALISTS[name].scope if name in SPECIALISTS else "",
            "facts": entry.get("facts", 0),
            "documents": entry.get("documents", 0),
            "ids": _list(entry.get("ids")),
        }
        for name, entry in _dict(output.get("specialists")).items()
        if isinstance(entry, dict)
    ]
    return {"rows": rows, "data_version": output.get("data_version", "")}


def specialist_context(step: AgentStep, output: dict[str, Any]) -> dict[str, Any]:
    claims = [c for c in _list(output.get("claims")) if isinstance(c, dict)]
    groups = [(layer, [c for c in claims if c.get("layer") == layer]) for layer in CLAIM_LAYERS]
    brief = _dict(output.get("brief"))
    return {
        "specialist": SPECIALISTS.get(step.key),
        "groups": [(layer, items) for layer, items in groups if items],
        "claim_count": len(claims),
        "evidence_quality": brief.get("evidence_quality", "none"),
        "coverage_gaps": _list(brief.get("coverage_gaps")),
        "undercurrents": _list(brief.get("undercurrents")),
        "dropped": [d for d in _list(output.get("dropped")) if isinstance(d, dict)],
        "reasked": bool(output.get("reasked")),
        "asked_model": bool(output.get("asked_model", True)),
    }


def audit_context(output: dict[str, Any]) -> dict[str, Any]:
    tiers = _dict(output.get("tiers"))
    return {
        "contradictions": [c for c in _list(output.get("contradictions")) if isinstance(c, dict)],
        "tiers": [(tier, tiers.get(tier, 0)) for tier in ("HIGH", "MEDIUM", "LOW")],
        "contested_ids": _list(output.get("contested_ids")),
        "downgraded": _list(output.get("downgraded")),
        "claims": [c for c in _list(output.get("claims")) if isinstance(c, dict)],
        "downgraded_keys": set(_list(output.get("downgraded"))),
    }


def iteration_context(output: dict[str, Any]) -> dict[str, Any]:
    final = _dict(output.get("final"))
    attempts = [
        {
            "number": number,
            "hill_climb": _dict(attempt.get("hill_climb")),
            "aperture": attempt.get("aperture", ""),
            "headline": _dict(_dict(attempt.get("iteration")).get("memo")).get("headline_thesis", ""),
        }
        for number, attempt in enumerate(_list(output.get("attempts")), 1)
        if isinstance(attempt, dict)
    ]
    return {
        "analysis": _dict(final.get("analysis")),
        "memo": _dict(final.get("memo")),
        "what_i_missed": _list(final.get("what_i_missed")),
        "jplus": scores(_dict(final.get("self_jplus")), JPLUS_DIMENSIONS),
        "jminus": scores(_dict(final.get("self_jminus")), JMINUS_DIMENSIONS),
        "hill_climb": _dict(output.get("hill_climb")),
        "rewritten": bool(output.get("rewritten")),
        "attempts": attempts,
    }


def _calibrated(
    self_scores: Mapping[str, Any],
    graded: Mapping[str, Any],
    inflation: Mapping[str, Any],
    dims: tuple[str, ...],
) -> ScoreTable:
    return ScoreTable(
        [ScoreRow(d, _int(self_scores.get(d)), _int(graded.get(d)), _int(inflation.get(d))) for d in dims]
    )


def _graded(grade: Mapping[str, Any]) -> tuple[ScoreTable, ScoreTable]:
    return scores(_dict(grade.get("jplus")), JPLUS_DIMENSIONS), scores(
        _dict(grade.get("jminus")), JMINUS_DIMENSIONS
    )


def evaluation_context(output: dict[str, Any]) -> dict[str, Any]:
    evaluation = _dict(output.get("evaluation"))
    verdict = _dict(output.get("verdict"))
    self_scores = [s for s in _list(output.get("self_scores")) if isinstance(s, dict)]
    grades: dict[int, dict[str, Any]] = {
        g["iteration"]: g
        for g in _list(evaluation.get("grades"))
        if isinstance(g, dict) and isinstance(g.get("iteration"), int)
    }
    # The verdict is about the final iteration: its self-scores beside the evaluator's grade of it.
    last_self = self_scores[-1] if self_scores else {}
    last_grade = grades.get(last_self.get("iteration", -1)) or (grades[max(grades)] if grades else {})
    inflation = _dict(verdict.get("inflation"))
    per_iteration = []
    for entry in self_scores:
        own_plus, own_minus = _graded(entry)
        plus, minus = _graded(grades.get(entry.get("iteration", -1), {}))
        per_iteration.append(
            {
                "iteration": entry.get("iteration"),
                "self_jplus": own_plus.total,
                "self_jminus": own_minus.total,
                "jplus": plus.total,
                "jminus": minus.total,
            }
        )
    return {
        "final_iteration": last_self.get("iteration"),
        "jplus": _calibrated(
            _dict(last_self.get("jplus")), _dict(last_grade.get("jplus")), inflation, JPLUS_DIMENSIONS
        ),
        "jminus": _calibrated(
            _dict(last_self.get("jminus")), _dict(last_grade.get("jminus")), inflation, JMINUS_DIMENSIONS
        ),
        "per_iteration": per_iteration,
        "divergences": [d for d in _list(evaluation.get("divergences")) if isinstance(d, dict)],
        "inflation_diagnosis": evaluation.get("inflation_diagnosis", ""),
        "next_run_recommendation": evaluation.get("next_run_recommendation", ""),
        "verdict": verdict,
        "recalibrated": [c for c in _list(verdict.get("recalibrated_hill_climb")) if isinstance(c, dict)],
        "same_model_warning": output.get("same_model_warning", ""),
    }


def memo_context(output: dict[str, Any], refs: Refs) -> dict[str, Any]:
    memo = _dict(output.get("memo"))
    firewall = _dict(output.get("firewall"))
    tiers = _dict(output.get("tiers"))
    stated = firewall.get("stated", memo.get("recommendation", ""))
    final = firewall.get("final", stated)
    return {
        "memo": memo,
        "analysis": _dict(output.get("analysis")),
        "firewall": firewall,
        "stated": stated,
        "final": final,
        "downgraded": final != stated,
        "load_bearing": [
            {
                "id": cid,
                "tier": tiers.get(cid) or refs.tier(cid) or "unresolved",
                "fact": refs.facts.get(cid),
                "document": refs.documents.get(cid),
            }
            for cid in _list(memo.get("load_bearing"))
        ],
        "verdict": _dict(output.get("verdict")),
        "numbers_removed": output.get("numbers_removed", 0),
    }


def document_context(step: AgentStep, refs: Refs) -> dict[str, Any]:
    """The template context for ``step``'s document: its kind, the ids it cites, and its own rows."""
    kind = kind_of(step)
    output = _dict(step.output)
    builders = {
        "evidence": lambda: evidence_context(output),
        "specialist": lambda: specialist_context(step, output),
        "audit": lambda: audit_context(output),
        "iteration": lambda: iteration_context(output),
        "evaluation": lambda: evaluation_context(output),
        "memo": lambda: memo_context(output, refs),
    }
    body = builders[kind]() if kind in builders else {}
    return {"kind": kind, "step": step, "run": step.run, "refs": refs, **body}
