"""Layer 2: the analyst personas propose a low, a medium and a high-risk move each, in parallel (seed 003's
generation fan-out: each persona is a shard, generate only). Then code merges duplicates by their declared
key, crediting every persona that proposed a move, and writes the moves the sandbox debates.

A move's citations must resolve to F1's and F2's claims (an id that does not is removed and noted); its
prose may reference figures, never type one (a sentence that does is withheld, and code says so).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from agents.agency.checks import shown
from agents.agency.dedup import clusters, dedup_key
from agents.agency.narrowing import moves_schema
from agents.agency.outputs import DebatedMove, MovesOutput, ProposalOutput, ProposedMove
from agents.agency.personas import ANALYST_ROLE, ANALYSTS, RISKS, Risk
from agents.agency.schemas import MoveDraft
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext
from agents.text.scripts import Language
from agents.text.sentences import trim_cut
from memos.models import AgentStep, Move
from memos.pipeline.agency.breadths import PERSONAS
from memos.pipeline.agency.plan import (
    MERGED_SKIP,
    MOVES,
    PROPOSALS,
    SANDBOX,
    debate_key,
    move_id,
    move_numbers,
)
from memos.pipeline.agency.reads import Findings, config, findings, proposed
from memos.pipeline.claims import fenced_write
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block, kept_numbers, language
from memos.pipeline.prompts import template
from memos.pipeline.skips import skip_steps


def run_proposals(ctx: StageContext) -> None:
    agency = config(ctx)
    found = findings(ctx)
    if not found.claims:
        raise StageFailed("F1 and F2 hold no findings: the analysts have nothing to cite")
    gw = gateway()
    numbers = move_numbers(agency)
    work: dict[str, Callable[[], ProposalOutput]] = {
        persona: partial(propose, gw, ctx, persona, found, numbers) for persona in agency.personas
    }
    done = ctx.fan_out(work, ProposalOutput, limit=gw.settings.max_concurrency, breadth=PERSONAS)
    if not done:
        raise StageFailed("no analyst proposed any move; see each analyst's error")
    ctx.once(MOVES, MovesOutput, lambda: merge(ctx))


def propose(
    gw: LLMGateway,
    ctx: StageContext,
    persona: str,
    found: Findings,
    numbers: dict[tuple[str, str], int],
) -> ProposalOutput:
    company = ctx.company
    ctx.check()
    prompt = template(ANALYSTS[persona].prompt, ctx.run).render(
        {"company": company.name, "ticker": company.ticker},
        {"findings": found.block(), "brief": brief_block(ctx)},
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=PROPOSALS, role=ANALYST_ROLE)
    answer, _ = trim_cut(
        gw.complete(prompt, moves_schema(tuple(found.claims), found.fact_ids), context=context)
    )
    keep = kept_numbers(ctx)
    moves = [
        checked(
            answer.draft(risk),
            persona=persona,
            risk=risk,
            identifier=move_id(numbers[(persona, risk)]),
            found=found,
            keep=keep,
            said_in=language(ctx),
        )
        for risk in RISKS
    ]
    return ProposalOutput(shard_id=f"persona:{persona}", persona=persona, moves=moves)


def checked(
    draft: MoveDraft,
    *,
    persona: str,
    risk: Risk,
    identifier: str,
    found: Findings,
    keep: frozenset[str],
    said_in: Language | None = None,
) -> ProposedMove:
    known = frozenset(found.citable)  # prose may reference the claims ([[F1.2]]) and the figures
    notes: list[str] = []

    def text(label: str, value: str) -> str:
        seen = shown(value, known, keep, language=said_in)
        if seen.note:
            notes.append(f"{label}: {seen.note}")
        return seen.text

    unknown = [ref for ref in draft.citations if ref not in found.claims]
    if unknown:
        notes.append(f"citations removed: {', '.join(unknown)} are not claims of F1 or F2")
    reasoning = [kept for paragraph in draft.reasoning if (kept := text("reasoning", paragraph))]
    return ProposedMove(
        move_id=identifier,
        persona=persona,
        risk=risk,
        action=draft.action,
        target=draft.target,
        title=text("title", draft.title) or f"A {risk}-risk move: {draft.action.replace('_', ' ')}",
        move=text("move", draft.move),
        reasoning=reasoning,
        risks=[kept for line in draft.risks if (kept := text("risks", line))],
        citations=[ref for ref in draft.citations if ref in found.claims],
        dedup_key=dedup_key(draft.action, draft.target),
        notes=notes,
    )


def merge(ctx: StageContext) -> MovesOutput:
    """The merged union (seed 003: mechanical, before any verdict): one Move row per proposed move, the
    duplicates pointing at the move debated in their place; their debate steps are skipped."""
    moves = proposed(ctx)
    groups = clusters([(move.move_id, move.dedup_key) for move in moves.values()])
    into = {member: group.first for group in groups for member in group.members}
    credited = {
        group.first: list(dict.fromkeys(moves[member].persona for member in group.members))
        for group in groups
    }
    rows = [
        Move(
            run_id=ctx.run.pk,
            move_id=move.move_id,
            number=int(move.move_id.lstrip("m")),
            persona=move.persona,
            risk=move.risk,
            title=move.title[:200],
            dedup_key=move.dedup_key[:200],
            credited=credited.get(move.move_id, [move.persona]),
            merged_into="" if into[move.move_id] == move.move_id else into[move.move_id],
        )
        for move in moves.values()
    ]

    def titled() -> None:
        # Each debate's card names its move from now on ("m3 · high · Acquire: a smaller competitor").
        for move in moves.values():
            AgentStep.objects.filter(run_id=ctx.run.pk, stage=SANDBOX, key=debate_key(move.move_id)).update(
                title=f"{move.move_id} · {move.risk} · {move.title}"[:200]
            )

    fenced_write(ctx.hold, titled, what="naming the debates")
    fenced_write(
        ctx.hold,
        lambda: Move.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["run", "move_id"],
            update_fields=["merged_into", "credited", "title"],
        ),
        what="writing the moves",
    )
    # Steps of moves no persona proposed (a persona whose call failed) and of duplicates are not debated.
    planned = [step.key for step in ctx.workflow.plan(ctx.config) if step.stage == SANDBOX]
    debated = {debate_key(group.first) for group in groups}
    duplicates = [debate_key(m) for m, first in into.items() if m != first]
    skip_steps(ctx, SANDBOX, duplicates, MERGED_SKIP)
    missing = [key for key in planned if key not in debated and key not in duplicates]
    skip_steps(ctx, SANDBOX, missing, "not proposed: the analyst's call failed")
    return MovesOutput(
        generated=len(moves),
        debated=[
            DebatedMove(
                move_id=group.first,
                risk=moves[group.first].risk,
                title=moves[group.first].title,
                persona=moves[group.first].persona,
                credited=credited[group.first],
                merged=[member for member in group.members if member != group.first],
            )
            for group in groups
        ],
    )
