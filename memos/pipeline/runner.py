"""The memo pipeline's stages: data -> specialists -> synthesis -> evaluation -> memo.

Each stage reads what it needs from the database by run id and writes each result as an AgentStep under its
natural key, so a stage that runs twice (a re-enqueued job after a killed worker) skips finished steps, and
LLM calls that had completed are answered from the ledger instead of being paid for again. No transaction
is held across an LLM call. Under RQ each stage is one job that enqueues the next after commit; ``run_inline``
drives the same stage bodies in-process (the ``analyze --inline`` command and the benchmark).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

import django_rq
from django.db import close_old_connections, transaction
from django.utils import timezone

from agents.data.edgar import load_company_facts
from agents.data.errors import DataError
from agents.llm.errors import InvalidOutput, LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.memo import hillclimb
from agents.memo.audit import AuditReport, Contradiction, audit, firewall
from agents.memo.citations import CheckedClaim, check_claims, merge, unresolved_citations
from agents.memo.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.narrowing import as_base, brief_schema, iteration_schema
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import Claim, Evaluation, SpecialistBrief, SynthesisIteration
from agents.memo.textrefs import removed_count
from agents.memo.verdict import decide
from memos.events import flush_events
from memos.models import AgentStep, Run
from memos.pipeline import steps
from memos.pipeline.evidence import document_block, evidence_for, fact_lines
from memos.pipeline.liveness import Heartbeat, RunLock
from memos.pipeline.llm import gateway, same_model_warning
from memos.pipeline.prompts import template
from memos.services.facts import save_company_facts
from memos.services.sources import edgar_source

log = logging.getLogger(__name__)

STAGES = ("data", "specialists", "synthesis", "evaluation", "memo")
QUEUE = "default"
Layer = AgentStep.Layer


class StageFailed(Exception):
    """The run cannot go on; the message is shown on the run page and printed by ``analyze``."""


# --- drivers


def enqueue_stage(run_id: str, stage: str) -> None:
    django_rq.get_queue(QUEUE).enqueue(run_stage, run_id, stage, description=f"run {run_id[:8]}: {stage}")


def run_stage(run_id: str, stage: str) -> None:
    """The RQ job: run one stage, then enqueue the next once this stage's rows are committed."""
    following = execute_stage(run_id, stage)
    if following is not None:
        transaction.on_commit(lambda: enqueue_stage(run_id, following))


def run_inline(run_id: str) -> None:
    """Every remaining stage in this process, in order (no worker needed)."""
    run = Run.objects.get(pk=run_id)
    stage: str | None = run.stage or STAGES[0]
    while stage is not None:
        stage = execute_stage(run_id, stage)


def execute_stage(run_id: str, stage: str) -> str | None:
    """Run ``stage`` if the run is still waiting for it; returns the stage to run next, if any."""
    run = Run.objects.select_related("brief__company").get(pk=run_id)
    if run.status not in Run.ACTIVE_STATUSES or _already_past(run, stage):
        return None
    with RunLock(run_id) as lock:
        if not lock.acquired:
            log.info("run %s: another worker holds it; leaving %s to that worker", run_id, stage)
            return None
        with Heartbeat(run_id, lock):
            steps.set_run(
                run,
                status=Run.Status.RUNNING,
                stage=stage,
                started_at=run.started_at or timezone.now(),
                heartbeat_at=timezone.now(),
                status_message=f"{stage}…",
            )
            try:
                STAGE_BODIES[stage](run)
            except StageFailed as exc:
                _fail(run, str(exc))
                return None
            except InvalidOutput as exc:
                _fail(run, f"the {stage} stage stopped: the model's answer did not fit its schema ({exc})")
                return None
            except LLMError as exc:
                _fail(run, f"the {stage} stage stopped: {exc}")
                return None
    following = STAGES[STAGES.index(stage) + 1] if stage != STAGES[-1] else None
    if following is None:
        _finish(run)
    else:
        steps.set_run(run, stage=following, status_message=f"{following} queued")
    flush_events()  # a work-horse exits right after the job: let the page hear about this stage first
    return following


def _finish(run: Run) -> None:
    """Done when the evaluator's calibrated scores accept the memo; otherwise the memo is kept and the run
    waits for a person (needs review), with the verdict's reason and the recommendation for the next run."""
    memo = AgentStep.objects.get(run=run, layer=Layer.MEMO, key="memo").output or {}
    verdict = memo.get("verdict", {})
    if verdict.get("decision") == "ACCEPT":
        status, message = Run.Status.DONE, f"memo ready: {verdict.get('reason', '')}"
    else:
        status = Run.Status.NEEDS_REVIEW
        message = (
            f"memo ready, evaluator says revise: {verdict.get('reason', '')}. "
            f"Next run: {verdict.get('next_run', '')}"
        )
    steps.set_run(run, status=status, finished_at=timezone.now(), status_message=message)


def _already_past(run: Run, stage: str) -> bool:
    return bool(run.stage) and run.stage in STAGES and STAGES.index(run.stage) > STAGES.index(stage)


def _fail(run: Run, message: str) -> None:
    AgentStep.objects.filter(run=run, status=AgentStep.Status.RUNNING).update(
        status=AgentStep.Status.FAILED, error=message, finished_at=timezone.now()
    )
    # What the failure kept from running is shown as skipped, not left waiting for ever.
    AgentStep.objects.filter(run=run, status=AgentStep.Status.PENDING).update(status=AgentStep.Status.SKIPPED)
    for step in AgentStep.objects.filter(run=run, status=AgentStep.Status.SKIPPED):
        steps.publish_step(step)
    steps.set_run(run, status=Run.Status.FAILED, finished_at=timezone.now(), status_message=message)


# --- evidence


def roster(run: Run) -> list[str]:
    names: list[str] = run.config.get("roster", list(SPECIALISTS))
    return names


def evidence(run: Run) -> dict[str, list[EvidenceItem]]:
    """Each specialist's evidence, frozen by the data stage: every later stage (and a resumed or re-run
    stage) reads exactly what the specialists were shown, even if the fact store changed since."""
    frozen = (
        AgentStep.objects.filter(run=run, layer=Layer.DATA, key="evidence", status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    if isinstance(frozen, dict) and all("items" in v for v in frozen.get("specialists", {}).values()):
        return {
            name: [_item(data) for data in selection["items"]]
            for name, selection in frozen["specialists"].items()
        }
    return select_evidence(run)


def select_evidence(run: Run) -> dict[str, list[EvidenceItem]]:
    """A fresh selection from the fact store (the data stage, and rehearsal scripts before a run starts)."""
    company = run.brief.company
    return {name: evidence_for(company, name) for name in roster(run)}


def _item_json(item: EvidenceItem) -> dict[str, Any]:
    return {**asdict(item), "published": item.published.isoformat() if item.published else None}


def _item(data: dict[str, Any]) -> EvidenceItem:
    published = data.get("published")
    return EvidenceItem(**{**data, "published": date.fromisoformat(published) if published else None})


def catalog_of(by_specialist: dict[str, list[EvidenceItem]]) -> EvidenceCatalog:
    return EvidenceCatalog.of(item for items in by_specialist.values() for item in items)


def _data_version(by_specialist: dict[str, list[EvidenceItem]]) -> str:
    digest = hashlib.sha256()
    for name in sorted(by_specialist):
        for item in by_specialist[name]:
            digest.update(f"{name}|{item.evidence_id}|{item.value}|{item.text}\n".encode())
    return digest.hexdigest()


# --- stage: data


def stage_data(run: Run) -> None:
    company = run.brief.company
    step = steps.ensure_step(run, Layer.DATA, "evidence")
    steps.start_step(step)
    if not company.facts.exists():
        try:
            save_company_facts(load_company_facts(edgar_source(), company.ticker))
        except DataError as exc:
            steps.fail_step(step, str(exc))
            raise StageFailed(f"no figures for {company.ticker}: {exc}") from exc
    by_specialist = select_evidence(run)
    version = _data_version(by_specialist)
    steps.set_run(run, data_version=version)
    steps.finish_step(
        step,
        {
            "data_version": version,
            "specialists": {
                name: {
                    "facts": sum(1 for i in items if i.kind == "fact"),
                    "documents": sum(1 for i in items if i.kind == "document"),
                    "ids": [i.evidence_id for i in items],
                    "items": [_item_json(i) for i in items],
                }
                for name, items in by_specialist.items()
            },
        },
    )


# --- stage: specialists


def stage_specialists(run: Run) -> None:
    by_specialist = evidence(run)
    catalog = catalog_of(by_specialist)
    todo: list[tuple[AgentStep, list[EvidenceItem]]] = []
    for name in roster(run):
        step = steps.ensure_step(run, Layer.SPECIALISTS, name)
        if step.status == AgentStep.Status.DONE:
            continue
        if not by_specialist[name]:
            steps.finish_step(step, _silent_brief(run, name))  # nothing to ask a model about
            continue
        todo.append((step, by_specialist[name]))
    if todo:
        _fan_out(run, todo, catalog)
    done = AgentStep.objects.filter(run=run, layer=Layer.SPECIALISTS, status=AgentStep.Status.DONE)
    if not done.exists():
        raise StageFailed("no specialist produced a usable brief; see each specialist's error")


def _silent_brief(run: Run, name: str) -> dict[str, Any]:
    spec = SPECIALISTS[name]
    brief = SpecialistBrief(
        claims=[],
        coverage_gaps=[f"No evidence in the data for {spec.scope} on {run.brief.company.ticker}."],
        undercurrents=[],
        evidence_quality="none",
    )
    return {"brief": brief.model_dump(), "claims": [], "dropped": [], "reasked": False, "asked_model": False}


def _fan_out(run: Run, todo: list[tuple[AgentStep, list[EvidenceItem]]], catalog: EvidenceCatalog) -> None:
    """Specialists in parallel under the configured bound; each result is stored as soon as it arrives."""
    gw = gateway()
    workers = max(1, min(len(todo), gw.settings.max_concurrency))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="specialist") as pool:
        futures = {
            pool.submit(_in_thread, _ask_specialist, gw, run, step.key, items, catalog): step
            for step, items in todo
        }
        for step, _ in todo:  # marked running while the calls are already in flight
            steps.start_step(step)
        for future in as_completed(futures):
            step = futures[future]
            try:
                steps.finish_step(step, future.result())
            except LLMError as exc:
                steps.fail_step(step, f"{step.title}: {exc}")
            steps.touch(str(run.pk))


def _in_thread(function: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    try:
        return function(*args)
    finally:
        close_old_connections()  # a pool thread must not leave a connection behind


def _ask_specialist(
    gw: LLMGateway, run: Run, name: str, items: list[EvidenceItem], catalog: EvidenceCatalog
) -> dict[str, Any]:
    prompt_template = template(f"specialist_{name}")
    brief_text = run.brief
    values = {
        "company": brief_text.company.name,
        "ticker": brief_text.company.ticker,
        "question": brief_text.question,
        "audience": brief_text.audience,
        "notes": brief_text.notes or "(none)",
        "facts": fact_lines(items),
    }
    max_claims = int(run.config.get("max_claims", 8))
    schema = brief_schema(name, tuple(item.evidence_id for item in items), max_claims)
    context = CallContext(run_id=str(run.pk), stage="specialists", role=name)

    def ask(correction: str) -> SpecialistBrief:
        prompt = prompt_template.render(
            values | {"correction": correction}, {"documents": document_block(items)}, nonce=run.nonce
        )
        answer: SpecialistBrief = as_base(gw.complete(prompt, schema, context=context), SpecialistBrief)
        return answer

    brief = ask("")
    unresolved = unresolved_citations(brief, catalog)
    if unresolved:  # one re-ask naming the ids that do not exist, then unresolved claims are dropped
        brief = ask(
            "Your previous answer cited ids that do not exist: "
            + ", ".join(unresolved)
            + ". Cite only ids that appear in the lists above."
        )
    kept, dropped = check_claims(name, brief, catalog)
    return {
        "brief": brief.model_dump(),
        "claims": [_claim_json(c) for c in kept],
        "dropped": [{"statement": d.claim.statement, "unresolved": list(d.unresolved)} for d in dropped],
        "reasked": bool(unresolved),
        "asked_model": True,
    }


def _claim_json(claim: CheckedClaim) -> dict[str, Any]:
    return {
        **claim.claim.model_dump(),
        "tier": claim.tier,
        "stated_tier": claim.claim.tier,
        "dedup_key": claim.dedup_key,
        "shard_id": claim.shard_id,
    }


def _checked(data: dict[str, Any]) -> CheckedClaim:
    claim = Claim(
        layer=data["layer"],
        statement=data["statement"],
        citations=data["citations"],
        tier=data["stated_tier"],
    )
    return CheckedClaim(data["shard_id"], claim, data["tier"], data["dedup_key"])


# --- stage: synthesis


def _specialist_outputs(run: Run) -> dict[str, dict[str, Any]]:
    done = AgentStep.objects.filter(run=run, layer=Layer.SPECIALISTS, status=AgentStep.Status.DONE)
    return {step.key: step.output or {} for step in done.order_by("position")}


def _audit(run: Run, catalog: EvidenceCatalog) -> tuple[list[CheckedClaim], AuditReport]:
    claims = [_checked(c) for output in _specialist_outputs(run).values() for c in output.get("claims", [])]
    merged = [m.representative for m in merge(claims)]
    return audit(merged, catalog)


@dataclass(frozen=True)
class SynthesisInputs:
    """What every synthesis call of a run reads: the audited claims, the audit and the citable ids."""

    run: Run
    claims: list[CheckedClaim]
    report: AuditReport
    cited: list[str]
    catalog: EvidenceCatalog
    total: int
    briefs: str  # the briefs as the synthesizer reads them, the same text for every iteration


def stage_synthesis(run: Run) -> None:
    catalog = catalog_of(evidence(run))
    claims, report = _audit(run, catalog)
    audit_step = steps.ensure_step(run, Layer.SYNTHESIS, "audit")
    if audit_step.status != AgentStep.Status.DONE:
        steps.start_step(audit_step)
        steps.finish_step(audit_step, _audit_json(claims, report))
    cited = sorted({cid for claim in claims for cid in claim.claim.citations})
    if not cited:
        raise StageFailed("the specialists' briefs cite no evidence at all: there is nothing to synthesise")
    total = int(run.config.get("iterations", 3))
    inputs = SynthesisInputs(run, claims, report, cited, catalog, total, _briefs_text(run, claims))
    previous: SynthesisIteration | None = None
    gw = gateway()
    for number in range(1, inputs.total + 1):
        step = steps.ensure_step(run, Layer.SYNTHESIS, f"iteration-{number}")
        if step.status != AgentStep.Status.DONE:
            steps.start_step(step)
            steps.finish_step(step, _iterate(gw, inputs, number, previous))
            steps.touch(str(run.pk))
        previous = SynthesisIteration.model_validate((step.output or {})["final"])


def _iterate(
    gw: LLMGateway, inputs: SynthesisInputs, number: int, previous: SynthesisIteration | None
) -> dict[str, Any]:
    """One iteration, rewritten with a changed aperture (bounded) when the hill-climb check fails."""
    attempts: list[dict[str, Any]] = []
    aperture = "" if previous is None else "Answer the previous iteration's what-I-missed list."
    baseline = None if previous is None else (previous.self_jplus, previous.self_jminus)
    for rewrite in range(hillclimb.MAX_REWRITES + 1):
        answer = _synthesise(gw, inputs, number, previous, aperture)
        check = hillclimb.check(number, answer.self_jplus, answer.self_jminus, baseline)
        attempts.append(
            {"iteration": answer.model_dump(), "hill_climb": check.as_dict(), "aperture": aperture}
        )
        if check.passed or rewrite == hillclimb.MAX_REWRITES:
            break
        aperture = (
            f"REWRITE: the previous draft of this iteration failed the hill-climb rule ({check.reason}). "
            f"Change the aperture: {hillclimb.aperture(rewrite)}."
        )
    final = attempts[-1]
    return {
        "final": final["iteration"],
        "hill_climb": final["hill_climb"],
        "rewritten": len(attempts) > 1,
        "attempts": attempts,
    }


def _synthesise(
    gw: LLMGateway, inputs: SynthesisInputs, number: int, previous: SynthesisIteration | None, aperture: str
) -> SynthesisIteration:
    run, catalog, cited = inputs.run, inputs.catalog, inputs.cited
    brief = run.brief
    evidence_lines = "\n".join(
        f"- {cid} [{item.tier}] {item.summary}" for cid in cited if (item := catalog.get(cid)) is not None
    )
    prompt = template("synthesizer").render(
        {
            "company": brief.company.name,
            "ticker": brief.company.ticker,
            "question": brief.question,
            "audience": brief.audience,
            "iteration": str(number),
            "iterations": str(inputs.total),
            "aperture": aperture,
            "evidence": evidence_lines,
            "audit": _audit_text(inputs.report),
        },
        {
            "briefs": inputs.briefs,
            "previous": json.dumps(previous.model_dump(), indent=1)
            if previous
            else "(this is the first iteration)",
        },
        nonce=run.nonce,
    )
    context = CallContext(run_id=str(run.pk), stage="synthesis", role="synthesizer")
    answer: SynthesisIteration = as_base(
        gw.complete(prompt, iteration_schema(tuple(cited)), context=context), SynthesisIteration
    )
    return answer


def _briefs_text(run: Run, claims: list[CheckedClaim]) -> str:
    outputs = _specialist_outputs(run)
    parts = []
    for name, output in outputs.items():
        brief = output.get("brief", {})
        lines = [f"== {SPECIALISTS[name].title} (evidence quality: {brief.get('evidence_quality', 'none')})"]
        lines += [
            f"- [{c.claim.layer}] [{c.tier}] {c.claim.statement} (cites {', '.join(c.claim.citations)})"
            for c in claims
            if c.shard_id == name
        ]
        lines += [f"- coverage gap: {gap}" for gap in brief.get("coverage_gaps", [])]
        lines += [f"- undercurrent: {u}" for u in brief.get("undercurrents", [])]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _audit_text(report: AuditReport) -> str:
    if not report.contradictions:
        return "No contradictions between briefs on the cited figures."
    return "\n".join(f"- {c.kind}: {c.detail}" for c in report.contradictions)


def _audit_json(claims: list[CheckedClaim], report: AuditReport) -> dict[str, Any]:
    return {
        **report.as_dict(),
        "claims": [_claim_json(c) for c in claims],
        "tiers": {tier: sum(1 for c in claims if c.tier == tier) for tier in ("HIGH", "MEDIUM", "LOW")},
    }


def _report_from(output: dict[str, Any]) -> AuditReport:
    return AuditReport(
        contradictions=[
            Contradiction(c["kind"], tuple(c["evidence_ids"]), tuple(c["shards"]), c["detail"])
            for c in output.get("contradictions", [])
        ],
        contested_ids=set(output.get("contested_ids", [])),
        downgraded=list(output.get("downgraded", [])),
    )


def _iterations(run: Run) -> list[SynthesisIteration]:
    rows = AgentStep.objects.filter(
        run=run, layer=Layer.SYNTHESIS, key__startswith="iteration-", status=AgentStep.Status.DONE
    )
    ordered = sorted(rows, key=lambda step: step.position)
    return [SynthesisIteration.model_validate((step.output or {})["final"]) for step in ordered]


# --- stage: evaluation


def stage_evaluation(run: Run) -> None:
    step = steps.ensure_step(run, Layer.EVALUATION, "evaluation")
    if step.status == AgentStep.Status.DONE:
        return
    steps.start_step(step)
    iterations = _iterations(run)
    claims = [_checked(c) for c in _audit_step(run).get("claims", [])]
    brief = run.brief
    prompt = template("evaluator").render(
        {"company": brief.company.name, "ticker": brief.company.ticker, "question": brief.question},
        {
            "briefs": _briefs_text(run, claims),
            "iterations": "\n\n".join(
                f"== Iteration {n}\n{json.dumps(it.model_dump(), indent=1)}"
                for n, it in enumerate(iterations, 1)
            ),
        },
        nonce=run.nonce,
    )
    context = CallContext(run_id=str(run.pk), stage="evaluation", role="evaluator")
    evaluation = gateway().complete(prompt, Evaluation, context=context)
    verdict = decide(iterations, evaluation)
    steps.finish_step(
        step,
        {
            "evaluation": evaluation.model_dump(),
            "verdict": verdict.as_dict(),
            "self_scores": [
                {"iteration": n, "jplus": it.self_jplus.model_dump(), "jminus": it.self_jminus.model_dump()}
                for n, it in enumerate(iterations, 1)
            ],
            "same_model_warning": same_model_warning(),
        },
    )


def _audit_step(run: Run) -> dict[str, Any]:
    step = AgentStep.objects.get(run=run, layer=Layer.SYNTHESIS, key="audit")
    return step.output or {}


# --- stage: memo


def stage_memo(run: Run) -> None:
    step = steps.ensure_step(run, Layer.MEMO, "memo")
    if step.status == AgentStep.Status.DONE:
        return
    steps.start_step(step)
    catalog = catalog_of(evidence(run))
    final = _iterations(run)[-1]
    decision = firewall(final.memo, catalog, _report_from(_audit_step(run)))
    evaluation = AgentStep.objects.get(run=run, layer=Layer.EVALUATION, key="evaluation").output or {}
    fact_ids = frozenset(i for i, item in catalog.items.items() if item.kind == "fact")
    prose = [
        final.memo.headline_thesis,
        final.memo.risk_budget,
        final.memo.sizing_rationale,
        *final.memo.falsifiers,
    ]
    prose += [c.event for c in final.memo.catalysts]
    prose += [final.analysis.macro, final.analysis.meso, final.analysis.micro]
    steps.finish_step(
        step,
        {
            "memo": final.memo.model_dump(),
            "analysis": final.analysis.model_dump(),
            "firewall": asdict(decision),
            "verdict": evaluation.get("verdict", {}),
            "tiers": {
                cid: catalog.items[cid].tier for cid in final.memo.load_bearing if cid in catalog.items
            },
            "numbers_removed": sum(removed_count(text, fact_ids) for text in prose),
        },
    )


STAGE_BODIES: dict[str, Callable[[Run], None]] = {
    "data": stage_data,
    "specialists": stage_specialists,
    "synthesis": stage_synthesis,
    "evaluation": stage_evaluation,
    "memo": stage_memo,
}
