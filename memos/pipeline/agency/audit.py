"""The optional jury (seed 003's kill-argument) on the recommended moves, after the ranking: for each, one
call on the jury's own model lists the strongest atomic objections and rules on each against the move's
debate; code computes the verdict from the rulings (agents.agency.jury) and names every recommended
move the jury would not let through. The ranking stays the board's: the jury's disagreement is shown beside
it, for the committee."""

from __future__ import annotations

from functools import partial

from agents.agency.board import THREADS
from agents.agency.critic import CRITIC_ROLE
from agents.agency.jury import JURY_ROLE, Verdict, verdict
from agents.agency.narrowing import jury_schema
from agents.agency.outputs import JuryOutput, RankingOutput
from agents.agency.personas import ANALYST_ROLE
from agents.llm.types import CallContext
from agents.text.sentences import trim_cut
from memos.models import Move
from memos.pipeline import fanout
from memos.pipeline.agency.breadths import JURY_AUDITS
from memos.pipeline.agency.debate import move_document
from memos.pipeline.agency.plan import FINAL
from memos.pipeline.agency.reads import findings, merged, proposed
from memos.pipeline.agency.turns import thread_text, threads_of
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway, llm_settings
from memos.pipeline.prompts import template


def same_family() -> str:
    """Seed 003's warning when the jury shares the family of the work it audits, or ""."""
    llm = llm_settings()
    jury = llm.family_for(JURY_ROLE)
    shared = [role for role in (ANALYST_ROLE, CRITIC_ROLE) if llm.family_for(role) == jury]
    if not shared:
        return ""
    return (
        f"The jury runs on the same model family ({jury}) as the {' and the '.join(str(r) for r in shared)}: "
        "set LLM_MODEL_JURY (and LLM_FAMILY_JURY) to yet another family."
    )


def audit(ctx: StageContext, ranking: RankingOutput) -> JuryOutput:
    moves, found = proposed(ctx), findings(ctx)
    credited = {move.move_id: move.credited for move in merged(ctx).debated}
    rows = {move.move_id: move for move in Move.objects.filter(run_id=ctx.run.pk)}
    gw = gateway()

    def judge(rank: int, move_id: str) -> Verdict:
        document = move_document(moves[move_id], found, credited.get(move_id, []))
        threads = threads_of(rows[move_id])
        debate = "\n\n".join(f"Thread {name}:\n{thread_text(threads[name])}" for name in THREADS)
        ctx.check()
        prompt = template("agency_jury", ctx.run).render(
            {}, {"move": document, "debate": debate}, nonce=ctx.run.nonce
        )
        context = CallContext(run_id=ctx.run_id, stage=FINAL, role=JURY_ROLE)
        answer, _ = trim_cut(gw.complete(prompt, jury_schema(found.citable), context=context))
        return verdict(move_id, rank, answer, [document, debate])

    recommended = [row for row in ranking.ranked if row.recommended]
    work = [(row.move_id, partial(judge, row.rank, row.move_id)) for row in recommended]
    done = {
        key: future.result()
        for key, future in fanout.in_parallel(work, limit=gw.settings.max_concurrency, breadth=JURY_AUDITS)
    }
    verdicts = [done[row.move_id] for row in recommended]
    return JuryOutput(
        verdicts=verdicts,
        disagreements=[v.line for v in verdicts if not v.survives],
        same_model_warning=same_family(),
    )
