"""``manage.py agency TICKER [--question "..."] [--profile quick|full] [--wait | --inline] [--out DIR]``.

Starts a consulting-agency run (seed 004): fifteen moves debated against a board and ranked. ``--out DIR``
writes what the run made: ``F1.md`` and ``F2.md``; ``m1.md``..``m15.md`` (a merged duplicate says which move
was debated in its place); each debated move's threads as ``threads/m<N>/i1.json``..``i3.json`` (a list of
turns, each with ``round``, ``speaker`` and ``text``); ``scores.json`` (the run's ``status``; ``unfinished``,
each part that did not finish with its ``step`` and ``reason``; ``not_debated``, each move never debated to
its end with its ``id`` and ``reason``; and ``moves``: each debated move's ``id``, ``persona``, ``risk``,
``scores`` per board member on the four metrics, ``total`` out of 120 and ``rank``) and ``ranking.md``. Exit
status 0 when the run is done, 3 when it needs review, 1 when it failed, 2 for bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.agency.board import BOARD
from agents.agency.outputs import InferenceOutput, RankingOutput
from agents.agency.personas import ANALYSTS
from agents.agency.schemas import METRICS
from memos.management.run_command import RunCommand
from memos.models import Move, Run
from memos.pipeline.agency.final import agency_report, not_debated
from memos.pipeline.agency.plan import NAME as AGENCY
from memos.pipeline.agency.plan import SET_ASIDE
from memos.pipeline.agency.turns import thread_json, threads_of
from memos.pipeline.steps import unfinished_parts


class AgencyCommand(RunCommand):
    help = "Start a consulting-agency run on a ticker: moves proposed, debated by a board, ranked."
    workflow = AGENCY
    default_profile = "quick"
    writes_out = "F1.md, F2.md, m*.md, threads/, scores.json and ranking.md"
    question_option = "question"
    default_question = "Which strategic moves should the company make next, and why?"

    def finish(self, run: Run, seconds: float, options: dict[str, Any]) -> None:
        report = agency_report(run)
        if report is None:
            self.stderr.write(f"agency: run {run.status} without a ranking: {run.status_message}")
            raise SystemExit(1)
        self.stdout.write(f"agency done in {seconds:.1f} s: {run.status_message}")
        self.stdout.write(report.summary())
        out: Path | None = options["out"]
        if out is not None:
            write_out(run, report.ranking, report.findings, out)
            self.stdout.write(f"wrote F1.md, F2.md, m*.md, threads/, scores.json and ranking.md in {out}")


def write_out(
    run: Run, ranking: RankingOutput, findings: dict[str, InferenceOutput | None], out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, output in findings.items():
        lines = [f"# {name}", ""]
        if output is not None:
            lines += [
                f"- **{claim.claim_id}** {claim.statement} (cites {', '.join(claim.citations)})"
                for claim in output.claims
            ]
            lines += ["", "## Gaps", "", *(f"- {gap}" for gap in output.gaps)]
        (out / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ranks = {row.move_id: row for row in ranking.ranked}
    moves = {move.move_id: move for move in Move.objects.filter(run=run).prefetch_related("turns", "scores")}
    documents = run.steps.filter(kind="proposal", status="done").values_list("output", flat=True)
    proposed = {m["move_id"]: m for output in documents if output for m in output["moves"]}
    scores = []
    for move_id, move in sorted(moves.items(), key=lambda item: item[1].number):
        doc = proposed.get(move_id)
        if doc is not None:
            (out / f"{move_id}.md").write_text(
                _move_markdown(doc, move, ranks.get(move_id)), encoding="utf-8"
            )
        if not move.debated or move.failure:  # merged into another, or its debate did not finish
            continue
        folder = out / "threads" / move_id
        folder.mkdir(parents=True, exist_ok=True)
        for thread, turns in threads_of(move).items():
            (folder / f"{thread}.json").write_text(
                json.dumps(thread_json(turns), indent=2) + "\n", encoding="utf-8"
            )
        finals = {s.member: s for s in move.scores.all() if s.phase == "final"}
        row = ranks.get(move_id)
        scores.append(
            {
                "id": move_id,
                "persona": move.persona,
                "risk": move.risk,
                "scores": {
                    member: {name: getattr(s, name) for name in METRICS}
                    for member, s in sorted(finals.items())
                },
                "total": sum(s.total for s in finals.values()),
                "rank": row.rank if row else None,
            }
        )
    scores.sort(key=lambda item: (item["rank"] is None, item["rank"] or 0))
    run.refresh_from_db(fields=["status"])
    missing = not_debated(run.pk)
    whole = {
        "status": run.status,
        "unfinished": [{"step": part.step, "reason": part.reason} for part in unfinished_parts(run.pk)],
        "not_debated": missing,
        "moves": scores,
    }
    (out / "scores.json").write_text(json.dumps(whole, indent=2) + "\n", encoding="utf-8")
    lines = ["# Ranking", "", "## Recommended next moves", ""]
    lines += [
        f"{row.rank}. {row.move_id} · {row.title} ({row.risk} risk): {row.total}/120"
        for row in ranking.ranked
        if row.recommended
    ]
    lines += ["", "## Other moves", ""]
    lines += [
        f"{row.rank}. {row.move_id} · {row.title} ({row.risk} risk): {row.total}/120"
        for row in ranking.ranked
        if not row.recommended
    ]
    if missing:
        lines += ["", "## Not debated (the ranking lacks them)", ""]
        lines += [f"- {row['id']}: {row['reason']}" for row in missing]
    (out / "ranking.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _move_markdown(doc: dict[str, Any], move: Move, ranked: Any) -> str:
    persona = ANALYSTS[doc["persona"]].title if doc["persona"] in ANALYSTS else doc["persona"]
    lines = [
        f"# {doc['move_id']}: {doc['title']}",
        "",
        f"*{doc['risk']} risk · proposed by the {persona.lower()}*",
        "",
    ]
    if move.merged_into:
        lines += [f"Merged into {move.merged_into} (the same action and target): debated there.", ""]
    elif move.failure.startswith(SET_ASIDE):  # set aside by code before the debate
        lines += [f"Not debated, set aside by code: {move.failure.removeprefix(SET_ASIDE)}", ""]
    elif move.failure:
        lines += [f"Not debated: its debate did not finish ({move.failure}). The ranking lacks it.", ""]
    elif ranked is not None:
        lines += [
            f"Rank {ranked.rank}: {ranked.total}/120 after the debate ({ranked.blind_total}/120 blind).",
            "",
        ]
    lines += [doc["move"], "", "## Reasoning", "", *[f"{p}\n" for p in doc["reasoning"]]]
    lines += [
        "## Risks",
        "",
        *(f"- {r}" for r in doc["risks"]),
        "",
        "## Cites",
        "",
        ", ".join(doc["citations"]) or "(nothing)",
    ]
    if move.debated:
        lines += ["", "## The board's final scores", ""]
        for score in move.scores.all():
            if score.phase == "final":
                lines.append(f"- {BOARD[score.member].title}: {score.total}/40")  # type: ignore[index]
    return "\n".join(lines) + "\n"
