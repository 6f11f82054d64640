"""Stage 3, synthesis: the fact-stability audit by code, then up to N iterations under the hill-climb rule.

The synthesizer has no tools and reads the specialists' briefs as model-written text. Each iteration answers
the previous one's what-I-missed list gap by gap; code checks every answer (``agents.memo.gaps``) and every
catalyst date (after the data's as-of date, within the horizon: ``agents.memo.catalysts``), and a draft that
fails either is asked once more with code's correction; what is still wrong is recorded (a catalyst still
outside the window is dropped from the memo). An iteration whose self-scores fail the hill-climb rule is
rewritten with another aperture (bounded). The synthesis stops as soon as the thresholds are met (seed 000's
escape valve, ``agents.memo.escape``): the iterations it did not need are marked skipped, with the reason.
Code, not the model, says whether anything passed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from agents.evidence import EvidenceCatalog
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.memo import catalysts, escape, gaps, hillclimb
from agents.memo.audit import AuditReport, audit
from agents.memo.catalysts import Window
from agents.memo.citations import CheckedClaim, merge
from agents.memo.contradictions import against_memo, between_specialists, directed, prompt_lines
from agents.memo.narrowing import as_base, iteration_schema
from agents.memo.outputs import Attempt, AuditOutput, IterationOutput
from agents.memo.rubric import MEMO_RUBRIC, MemoRubric
from agents.memo.schemas import SynthesisIteration
from agents.text.sentences import trim_cut
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.evidence import fact_line
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block
from memos.pipeline.memo.others import other_memos
from memos.pipeline.memo.plan import AUDIT, SYNTHESIS, iteration_key
from memos.pipeline.memo.reads import (
    briefs_text,
    catalog_of,
    catalyst_window,
    config,
    evidence,
    specialist_outputs,
)
from memos.pipeline.prompts import rubric, template
from memos.pipeline.skips import skip_steps

FIRST_APERTURE = "Answer the previous iteration's what-I-missed list."


@dataclass(frozen=True)
class SynthesisInputs:
    """What every synthesis call of a run reads, built once per stage."""

    ctx: StageContext
    audit: AuditOutput
    cited: list[str]
    catalog: EvidenceCatalog
    total: int
    briefs: str  # the briefs as the synthesizer reads them, the same text for every iteration
    window: Window | None  # the dates a catalyst may carry


def run_synthesis(ctx: StageContext) -> None:
    catalog = catalog_of(evidence(ctx))
    outputs = specialist_outputs(ctx)
    claims = [c for o in outputs.values() for c in o.claims]
    gaps = {shard: list(o.brief.coverage_gaps) for shard, o in outputs.items() if o.asked_model}
    own = (ctx.company.name, ctx.company.ticker)
    audited = ctx.once(AUDIT, AuditOutput, lambda: _audited(ctx, claims, catalog, own, gaps))
    if audited is None:
        raise StageFailed("the fact-stability audit was skipped: there is nothing to synthesise from")
    cited = sorted({cid for claim in audited.claims for cid in claim.citations})
    if not cited:
        raise StageFailed("the specialists' briefs cite no evidence at all: there is nothing to synthesise")
    inputs = SynthesisInputs(
        ctx,
        audited,
        cited,
        catalog,
        config(ctx).iterations,
        briefs_text(outputs, audited),
        catalyst_window(ctx),
    )
    previous: SynthesisIteration | None = None
    gw = gateway()
    for number in range(1, inputs.total + 1):
        done = ctx.once(
            iteration_key(number),
            IterationOutput,
            partial(iterate, gw, inputs, number, previous),
        )
        if done is None:
            break  # skipped: an earlier pass of this stage stopped the synthesis before it
        previous = done.final
        if done.escape is not None and done.escape.stop:
            skip_rest(ctx, number, inputs.total)
            break


def skip_rest(ctx: StageContext, number: int, total: int) -> None:
    """The iterations after ``number`` are not needed: marked skipped, with the reason on their cards."""
    keys = [iteration_key(n) for n in range(number + 1, total + 1)]
    reason = f"not needed: iteration {number} met the thresholds (seed 000's escape valve)"
    skip_steps(ctx, SYNTHESIS, keys, reason)


def _audited(
    ctx: StageContext,
    claims: list[CheckedClaim],
    catalog: EvidenceCatalog,
    own: tuple[str, str],
    gaps: dict[str, list[str]],
) -> AuditOutput:
    """The fact-stability audit, then the contradiction checks (agents.memo.contradictions): the
    specialists' claims against one another, every claim (before merging, so each specialist is named)
    against the latest memos of the company's other briefs."""
    audited = AuditOutput.of(*_audit(claims, catalog, own, gaps))
    read = directed(claims, catalog)
    flags = between_specialists(read)
    others = other_memos(ctx.run)
    for memo, theirs in others:
        flags += against_memo(read, theirs, memo)
    return audited.model_copy(
        update={"directed": read, "claim_contradictions": flags, "compared_with": [m for m, _ in others]}
    )


def _audit(
    claims: list[CheckedClaim],
    catalog: EvidenceCatalog,
    own: tuple[str, str],
    gaps: dict[str, list[str]],
) -> tuple[list[CheckedClaim], AuditReport]:
    return audit([m.representative for m in merge(claims)], catalog, own=own, gaps=gaps)


def iterate(
    gw: LLMGateway, inputs: SynthesisInputs, number: int, previous: SynthesisIteration | None
) -> IterationOutput:
    """One iteration: each draft checked by code (catalyst dates, answered gaps) and corrected once if it
    fails; rewritten with a changed aperture (bounded) when the hill-climb check fails."""
    attempts: list[Attempt] = []
    trimmed: list[str] = []
    aperture = "" if previous is None else FIRST_APERTURE
    baseline = None if previous is None else (previous.self_jplus, previous.self_jminus)
    rules = MemoRubric(rubric(MEMO_RUBRIC, inputs.ctx.run))  # the run's pinned J+/J- rubric
    for rewrite in range(hillclimb.MAX_REWRITES + 1):
        correction = ""
        while True:
            answer, trimmed = _synthesise(
                gw, inputs, number, previous, aperture=aperture, correction=correction
            )
            check = hillclimb.check(number, answer.self_jplus, answer.self_jminus, baseline, rubric=rules)
            problems = _problems(inputs, previous, answer)
            attempts.append(
                Attempt(
                    iteration=answer,
                    hill_climb=check,
                    aperture=aperture,
                    correction=correction,
                    problems=problems,
                )
            )
            if not problems or correction:  # one correction per draft, then what is wrong is recorded
                break
            correction = _correction(inputs, problems)
        if check.passed or rewrite == hillclimb.MAX_REWRITES:
            break
        aperture = (
            f"REWRITE: the previous draft of this iteration failed the hill-climb rule ({check.reason}). "
            f"Change the aperture: {hillclimb.aperture(rewrite)}."
        )
    final = attempts[-1]
    answered = gaps.check(previous, final.iteration)
    return IterationOutput(
        final=final.iteration,
        hill_climb=final.hill_climb,
        rewritten=any(attempt.aperture.startswith("REWRITE") for attempt in attempts),
        attempts=attempts,
        gaps=answered,
        dropped_catalysts=catalysts.outside(final.iteration.memo, inputs.window),
        escape=escape.check(number, inputs.total, final.iteration, final.hill_climb, answered, rubric=rules),
        trimmed=trimmed,
    )


def _problems(
    inputs: SynthesisInputs, previous: SynthesisIteration | None, answer: SynthesisIteration
) -> list[str]:
    """What code finds wrong with a draft, in its own words (dates and section names only, no prose)."""
    dates = [f"the catalyst {item.reason}" for item in catalysts.outside(answer.memo, inputs.window)]
    return dates + gaps.problems(gaps.check(previous, answer))


def _correction(inputs: SynthesisInputs, problems: list[str]) -> str:
    window = inputs.window
    dates = (
        f" Every catalyst must be dated after {window.as_of.isoformat()} and on or before "
        f"{window.until.isoformat()}."
        if window is not None
        else ""
    )
    return (
        "CORRECTION: the desk's checks found problems in your previous answer to this iteration: "
        + "; ".join(problems)
        + f".{dates} Every gap of the previous list needs an answered_gaps entry: addressed in a section "
        "you changed, or out_of_scope with the reason. Answer the whole iteration again."
    )


def _synthesise(
    gw: LLMGateway,
    inputs: SynthesisInputs,
    number: int,
    previous: SynthesisIteration | None,
    *,
    aperture: str,
    correction: str,
) -> tuple[SynthesisIteration, list[str]]:
    ctx, catalog = inputs.ctx, inputs.catalog
    company = ctx.company
    cited = [item for cid in inputs.cited if (item := catalog.get(cid)) is not None]
    # Facts are described by code; a document's summary carries its title and source, which are not.
    facts = "\n".join(fact_line(i) for i in cited if i.kind == "fact")
    documents = "\n".join(f"- {i.evidence_id} [{i.tier}] {i.summary}" for i in cited if i.kind == "document")
    window = inputs.window
    ctx.check()
    prompt = template("synthesizer", ctx.run).render(
        {
            "company": company.name,
            "ticker": company.ticker,
            "iteration": str(number),
            "iterations": str(inputs.total),
            "aperture": aperture,
            "correction": correction,
            "evidence": facts or "(no figures cited)",
            "audit": _audit_text(inputs.audit),
            "as_of": window.as_of.isoformat() if window else "(not known)",
            "until": window.until.isoformat() if window else "(not known)",
            "horizon": f"{window.horizon_months} months" if window else "(not known)",
        },
        {
            "brief": brief_block(ctx),
            "documents": documents or "(no documents cited)",
            "briefs": inputs.briefs,
            # Model-written quotes: untrusted, fenced. The figure goes by its id only (code renders values).
            "contradictions": prompt_lines(inputs.audit.claim_contradictions),
            "previous": json.dumps(previous.model_dump(), indent=1)
            if previous
            else "(this is the first iteration)",
        },
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=SYNTHESIS, role="synthesizer")
    schema = iteration_schema(
        tuple(inputs.cited),
        facts=tuple(item.evidence_id for item in cited if item.kind == "fact"),
        window=(window.as_of + timedelta(days=1), window.until) if window is not None else None,
    )
    answer: SynthesisIteration = as_base(gw.complete(prompt, schema, context=context), SynthesisIteration)
    return trim_cut(answer)


def _audit_text(report: AuditReport) -> str:
    if not report.contradictions:
        return "No contradictions between briefs on the cited figures."
    return "\n".join(f"- {c.kind}: {c.detail}" for c in report.contradictions)
