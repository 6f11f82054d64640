"""The final output, by code: every debated move ranked by its board total (out of 120, agents.agency.
ranking), the top three as Recommended Next Moves, the rest as Other Moves; what the debate looked like,
measured; and the version the run freezes (kind ``agency``, its own line of versions).

The stored moves and turns were filtered already (typed figures withheld with code's note, references kept
as ``[[fact id]]``); the version's text is built from them with code's own words around them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from statistics import mean
from uuid import UUID

from django.db.models import Sum

from agents.agency.board import BOARD
from agents.agency.jury import Verdict
from agents.agency.outputs import (
    DebateOutput,
    DebateStats,
    InferenceOutput,
    JuryOutput,
    MovesOutput,
    ProposedMove,
    RankedMove,
    RankingOutput,
)
from agents.agency.personas import ANALYSTS
from agents.agency.ranking import RECOMMENDED, rank
from agents.agency.schemas import METRICS, ScoreCard
from agents.text.figures import fact_ids_in
from memos.models import AgentStep, LLMCall, Move, Run
from memos.pipeline.agency.audit import audit
from memos.pipeline.agency.plan import (
    F1,
    F2,
    FINAL,
    INFERENCE,
    INFERENCE_KIND,
    JURY,
    MERGED_SKIP,
    MOVES,
    PROPOSALS,
    RANKING,
    SANDBOX,
    SET_ASIDE,
    move_of,
)
from memos.pipeline.agency.reads import config, findings, merged, proposed
from memos.pipeline.agency.turns import thread_json, threads_of
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.workflows import Artefact, Ending

KIND = "agency"


def debates(ctx: StageContext) -> dict[str, DebateOutput]:
    return {output.move_id: output for output in ctx.outputs(SANDBOX, DebateOutput, kind="debate").values()}


def run_final(ctx: StageContext) -> None:
    ranked = ctx.once(RANKING, RankingOutput, lambda: ranking(ctx))
    if ranked is not None and config(ctx).jury:
        ctx.once(JURY, JuryOutput, lambda: audit(ctx, ranked))


def ranking(ctx: StageContext) -> RankingOutput:
    outputs = debates(ctx)
    if not outputs:
        raise StageFailed("no move was scored: nothing to rank")
    moves = proposed(ctx)
    cards: dict[str, dict[str, ScoreCard]] = {
        move: {s.member: s.card for s in output.final} for move, output in outputs.items()
    }
    blind_cards: dict[str, dict[str, ScoreCard]] = {
        move: {s.member: s.card for s in output.blind} for move, output in outputs.items() if output.blind
    }
    final_rank = rank(cards)
    debated = {move.move_id: move for move in merged(ctx).debated}
    blind_rank = {row.move: row.rank for row in rank(blind_cards)} if len(blind_cards) == len(cards) else {}
    ranked = [
        RankedMove(
            move_id=row.move,
            rank=row.rank,
            total=row.total,
            blind_total=outputs[row.move].blind_total,
            risk=moves[row.move].risk,
            persona=moves[row.move].persona,
            title=moves[row.move].title,
            recommended=row.rank <= RECOMMENDED,
            credited=debated[row.move].credited if row.move in debated else [moves[row.move].persona],
            merged=len(debated[row.move].merged) if row.move in debated else 0,
        )
        for row in final_rank
    ]
    standings = [standing for output in outputs.values() for standing in output.standings]
    shifts = [output.total - output.blind_total for output in outputs.values() if output.blind]
    stats = DebateStats(
        positions=dict(Counter(standing.position or "none" for standing in standings)),
        risks=dict(Counter(moves[move].risk for move in outputs)),
        changes=sum(standing.changes for standing in standings),
        supported_changes=sum(standing.supported_changes for standing in standings),
        mean_shift=round(mean(shifts), 2) if shifts else 0.0,
        moved_ranks=sum(1 for row in final_rank if blind_rank and blind_rank[row.move] != row.rank),
    )
    return RankingOutput(ranked=ranked, stats=stats)


def ending(ctx: StageContext) -> Ending:
    output = ctx.output(FINAL, RANKING, RankingOutput)
    if output is None:
        raise StageFailed("the ranking did not finish")
    top = output.ranked[0]
    union = merged(ctx)
    aside = f", {len(union.set_aside)} set aside by code" if union.set_aside else ""
    line = (
        f"{union.generated} moves generated{aside}, {len(output.ranked)} debated and ranked; first: "
        f"{top.move_id} ({top.total}/120)"
    )
    jury = ctx.output(FINAL, JURY, JuryOutput)
    if jury is not None and jury.disagreements:
        return Ending(Run.Status.NEEDS_REVIEW, f"{line}; the jury disagrees: {'; '.join(jury.disagreements)}")
    if jury is not None and jury.checked_nothing:
        return Ending(
            Run.Status.DONE,
            f"{line}; the jury could not check any of its objections (no ruling quoted words code found): "
            "its verdicts say nothing either way",
        )
    if jury is not None and jury.unchecked:
        # Some verdicts checked, some not: the ones code could not check are named, never counted as survived.
        return Ending(
            Run.Status.DONE,
            f"{line}; the jury could not check any objection on {', '.join(jury.unchecked)} (its verdict "
            "there says nothing either way); the other recommended moves survive it",
        )
    return Ending(Run.Status.DONE, line + ("; every recommended move survives the jury" if jury else ""))


def not_debated(run_id: UUID | str) -> list[dict[str, str]]:
    """Each move that was never debated to its end, with why: its debate failed, or the persona who would
    have proposed it failed. A duplicate merged into another move is debated there, so it is not listed.
    The ranking lacks these moves: one of them might have ranked first."""
    steps = AgentStep.objects.filter(
        run_id=run_id, stage=SANDBOX, status__in=[AgentStep.Status.FAILED, AgentStep.Status.SKIPPED]
    ).order_by("position", "id")
    missing = []
    for step in steps:
        if step.status == AgentStep.Status.SKIPPED and step.summary == MERGED_SKIP:
            continue
        said = step.error if step.status == AgentStep.Status.FAILED else step.summary
        reason = said.removeprefix(f"{step.title}: ").strip() or "it did not finish"
        missing.append({"id": move_of(step.key), "reason": reason})
    return missing


def agency_artefact(ctx: StageContext) -> Artefact:
    output = ctx.output(FINAL, RANKING, RankingOutput)
    if output is None:
        raise StageFailed("the ranking did not finish, so there is nothing to freeze")
    moves, outputs, found = proposed(ctx), debates(ctx), findings(ctx)
    jury = ctx.output(FINAL, JURY, JuryOutput)
    recommended = [row for row in output.ranked if row.recommended]
    others = [row for row in output.ranked if not row.recommended]
    verdicts = {verdict.move_id: verdict for verdict in jury.verdicts} if jury is not None else {}
    sections = {
        "Recommended next moves": "\n\n".join(
            _full(row, moves[row.move_id], outputs[row.move_id], verdicts.get(row.move_id))
            for row in recommended
        ),
        "Other moves": "\n".join(
            f"{row.rank}. {row.move_id} ({row.risk} risk, {row.total}/120): {row.title}" for row in others
        )
        or "(none)",
        "Jury": "\n".join(verdict.line for verdict in jury.verdicts)
        if jury is not None
        else "(no jury on this run)",
        "F1: financial inference": "\n".join(
            f"{c.claim_id}: {c.statement}" for c in (found.f1.claims if found.f1 else [])
        ),
        "F2: trend and sentiment": "\n".join(
            f"{c.claim_id}: {c.statement}" for c in (found.f2.claims if found.f2 else [])
        ),
    }
    union = merged(ctx)
    # A move set aside by code is listed with its whole reason and figures, not its step's one line.
    reasons = {move.move_id: f"{SET_ASIDE}{move.check.reason}" for move in union.set_aside}
    missing = [{**row, "reason": reasons.get(row["id"], row["reason"])} for row in not_debated(ctx.run_id)]
    if missing:
        sections["Moves not debated"] = "\n".join(f"{row['id']}: {row['reason']}" for row in missing)
    merges = [move for move in union.debated if move.merged]
    if merges:
        sections["Duplicates merged"] = "\n".join(
            f"{move.move_id} ({move.title}): {1 + len(move.merged)} proposals "
            f"({', '.join([move.move_id, *move.merged])}), credited to {', '.join(move.credited)}"
            for move in merges
        )
    cited_claims = [ref for row in output.ranked for ref in moves[row.move_id].citations]
    evidence = [
        ref
        for output_ in (found.f1, found.f2)
        if output_ is not None
        for claim in output_.claims
        if claim.claim_id in cited_claims
        for ref in claim.citations
    ]
    # The figures that set a move aside are frozen with the version too (the target's among them).
    aside = [figure.fact_id for move in union.set_aside for figure in move.check.figures]
    cited = dict.fromkeys(
        [*evidence, *aside, *(ref for text in sections.values() for ref in fact_ids_in(text))]
    )
    company = ctx.company
    return Artefact(
        kind=KIND,
        title=f"{company.ticker}: {len(output.ranked)} moves debated and ranked"[:300],
        content={
            "ranking": output.model_dump(mode="json"),
            "moves": {move_id: move.model_dump(mode="json") for move_id, move in moves.items()},
            "debates": {move_id: debate.model_dump(mode="json") for move_id, debate in outputs.items()},
            "jury": jury.model_dump(mode="json") if jury is not None else None,
            "not_debated": missing,
            "set_aside": [move.model_dump(mode="json") for move in union.set_aside],
            # The threads themselves, frozen with the version: its page shows every move's debate.
            "threads": {
                move.move_id: {thread: thread_json(turns) for thread, turns in threads_of(move).items()}
                for move in Move.objects.filter(run_id=ctx.run.pk, move_id__in=list(outputs))
            },
        },
        sections=sections,
        evaluated=True,  # the board's scores, added up by code, are the verdict
        score=float(recommended[0].total) if recommended else None,
        score_label="first move, /120",
        scores={
            "ranked": [row.model_dump(mode="json") for row in output.ranked],
            "stats": output.stats.model_dump(),
        },
        cited=tuple(cited),
    )


def _full(row: RankedMove, move: ProposedMove, debate: DebateOutput, verdict: Verdict | None) -> str:
    """A recommended move in full: what to do, why, its scores, how the board ended, the objection that
    still stands in its debate and the jury's verdict with the objections it left standing."""
    others = [persona for persona in row.credited if persona != move.persona]
    lines = [
        f"{row.rank}. {move.move_id} · {move.title} ({move.risk} risk, proposed by the "
        f"{ANALYSTS[move.persona].title.lower()}"
        + (f", also by the {', the '.join(ANALYSTS[p].title.lower() for p in others)}" if others else "")
        + f"): {row.total}/120 after the debate, {row.blind_total}/120 blind",
        move.move,
        *move.reasoning,
        "Risks: " + " ".join(move.risks),
        "Scores: "
        + "; ".join(
            f"{BOARD[s.member].title} {s.total}/40 ("
            + ", ".join(f"{name.replace('_', ' ')} {s.card.metric(name).score}" for name in METRICS)
            + ")"
            for s in debate.final
        ),
        "Where the board ended: "
        + "; ".join(f"{BOARD[s.member].title} {s.position or 'no answer'}" for s in debate.standings),
        f"Objection still standing ({debate.objection_by}): \u201c{debate.objection}\u201d",
    ]
    if verdict is not None:
        lines.append(f"Jury: {verdict.line}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Report:
    """A finished run's ranking and what it cost, as the ``agency`` command prints it."""

    ranking: RankingOutput
    findings: dict[str, InferenceOutput | None]
    generated: int
    calls: int
    prompt_tokens: int

    def summary(self) -> str:
        stats = self.ranking.stats
        positions = sum(stats.positions.values()) or 1
        risks = sum(stats.risks.values()) or 1
        share = f"{stats.supported_changes}/{stats.changes}" if stats.changes else "none"
        lines = [
            f"{self.generated} moves generated, {len(self.ranking.ranked)} debated; {self.calls} LLM calls, "
            f"{self.prompt_tokens} prompt tokens",
            "positions at the last round: "
            + ", ".join(
                f"{name} {count * 100 // positions}%" for name, count in sorted(stats.positions.items())
            ),
            "risk levels debated: "
            + ", ".join(f"{name} {count * 100 // risks}%" for name, count in sorted(stats.risks.items())),
            f"position changes that cited something new or the critic's words: {share}",
            f"blind to final: mean shift {stats.mean_shift:+} per move, "
            f"{stats.moved_ranks} moves changed rank",
        ]
        lines += [
            f"{'*' if row.recommended else ' '} {row.rank:>2}. {row.move_id:<4} {row.total:>3}/120 "
            f"(blind {row.blind_total:>3})  {row.risk:<6} {row.title}"
            for row in self.ranking.ranked
        ]
        return "\n".join(lines)


def agency_report(run: Run) -> Report | None:
    """The finished run's report, read from its steps and ledger; None when it has no ranking."""
    outputs = {
        (step.stage, step.key): step.output
        for step in run.steps.filter(status=AgentStep.Status.DONE, kind__in=[RANKING, INFERENCE_KIND, MOVES])
    }
    raw = outputs.get((FINAL, RANKING))
    if raw is None:
        return None
    moves = outputs.get((PROPOSALS, MOVES))
    calls = LLMCall.objects.filter(run=run).exclude(outcome=LLMCall.Outcome.CACHED)
    return Report(
        ranking=RankingOutput.model_validate(raw),
        findings={
            name: InferenceOutput.model_validate(found) if (found := outputs.get((INFERENCE, name))) else None
            for name in (F1, F2)
        },
        generated=MovesOutput.model_validate(moves).generated if moves else 0,
        calls=calls.count(),
        prompt_tokens=calls.aggregate(total=Sum("tokens_in"))["total"] or 0,
    )
