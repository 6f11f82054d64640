"""The jury (seed 003's kill-argument) on the recommended moves, after the ranking, on by default. For each
recommended move, two threads on the jury's role: the strongest rejection of the move in one call, then a
fresh conversation (a new prompt, no history) that sees only the move and that rejection, splits it into
atomic objections and rules on each with a quote. Code computes the verdict from the rulings
(agents.agency.jury) and names every recommended move the jury would not let through. The ranking stays the
board's: the jury's disagreement is shown beside it, for the committee.

Each call is recorded in the ledger, so a resumed stage answers the calls that had completed from it and
pays only for the others."""

from __future__ import annotations

from functools import partial

from agents.agency.jury import JURY_ROLE, Verdict, rejection_schema, verdict
from agents.agency.narrowing import jury_schema
from agents.agency.outputs import JuryOutput, RankingOutput
from agents.llm.types import CallContext
from agents.text.sentences import trim_cut
from memos.pipeline import fanout
from memos.pipeline.agency.breadths import JURY_AUDITS
from memos.pipeline.agency.debate import move_document
from memos.pipeline.agency.plan import FINAL
from memos.pipeline.agency.reads import findings, merged, proposed
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway
from memos.pipeline.judge_families import badges
from memos.pipeline.prompts import template


def audit(ctx: StageContext, ranking: RankingOutput) -> JuryOutput:
    moves, found = proposed(ctx), findings(ctx)
    credited = {move.move_id: move.credited for move in merged(ctx).debated}
    gw = gateway()
    context = CallContext(run_id=ctx.run_id, stage=FINAL, role=JURY_ROLE)

    def judge(rank: int, move_id: str) -> Verdict:
        document = move_document(moves[move_id], found, credited.get(move_id, []))
        ctx.check()
        # Thread 1: the strongest rejection, seeing the move only.
        attack = template("agency_jury_rejection", ctx.run).render(
            {}, {"move": document}, nonce=ctx.run.nonce
        )
        memo, _ = trim_cut(gw.complete(attack, rejection_schema(found.citable), context=context))
        ctx.check()
        # Thread 2: a fresh conversation with the move and the rejection only, never thread 1's history.
        rule = template("agency_jury_rulings", ctx.run).render(
            {}, {"move": document, "rejection": memo.rejection}, nonce=ctx.run.nonce
        )
        rulings, _ = trim_cut(gw.complete(rule, jury_schema(found.citable), context=context))
        return verdict(move_id, rank, rulings, document, memo.rejection)

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
        # Seed 003: the jury's family as the run recorded it when it started (memos.pipeline.judge_families).
        same_model_warning=" ".join(badges(ctx.run.verdict_families, role=JURY_ROLE)),
    )
