"""The consulting agency (seed 004 under seed 003's rules) as a workflow of the run engine: layer 0 gathers by
code, F1 and F2 infer, five analyst personas propose fifteen moves, the sandbox debates each against a board
of three, turn by turn, and code ranks the scores.

Its runs are ``Run.workflow == "agency"``, its versions kind ``agency`` (one name for the workflow
everywhere; ``agency/`` at the top of the tree is the Django project).
"""

from __future__ import annotations

from agents.agency.outputs import (
    DebateOutput,
    InferenceOutput,
    JuryOutput,
    MovesOutput,
    ProposalOutput,
    RankingOutput,
    SourcesOutput,
)
from agents.llm.roles import Role
from memos.pipeline.agency import plan, profiles
from memos.pipeline.agency.breadths import INFERENCES, JURY_AUDITS, PERSONAS, SCORES, TURNS
from memos.pipeline.agency.final import agency_artefact, ending, run_final
from memos.pipeline.agency.inference import run_inference
from memos.pipeline.agency.plan import (
    DEBATE,
    INFERENCE_KIND,
    JURY,
    MOVES,
    PROPOSAL,
    RANKING,
    SOURCES_KIND,
)
from memos.pipeline.agency.proposals import run_proposals
from memos.pipeline.agency.sandbox import run_sandbox
from memos.pipeline.agency.sources import run_sources
from memos.pipeline.judge_families import Judged
from memos.pipeline.workflows import Stage, StepKind, Workflow

TEMPLATES = "memos/step_documents/agency"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _sources(output: SourcesOutput) -> str:
    line = f"{_plural(len(output.facts), 'figure')} · {_plural(len(output.documents), 'document')}"
    return line + (f" ({output.stale} stale)" if output.stale else "")


def _inference(output: InferenceOutput) -> str:
    if not output.asked_model:
        left_out = f" ({len(output.promotional)} promotional left out)" if output.promotional else ""
        return "nothing to read: not asked" + left_out
    line = f"{_plural(len(output.claims), 'claim')} · {_plural(len(output.gaps), 'gap')}"
    line += f" · {len(output.dropped)} dropped" if output.dropped else ""
    line += f" · {len(output.merged)} merged" if output.merged else ""
    return line + (f" · {len(output.promotional)} promotional left out" if output.promotional else "")


def _proposal(output: ProposalOutput) -> str:
    return " · ".join(f"{move.move_id} {move.risk}" for move in output.moves)


def _moves(output: MovesOutput) -> str:
    return f"{output.generated} generated, {len(output.debated)} debated"


def _debate(output: DebateOutput) -> str:
    positions = " ".join(f"{s.member.upper()} {s.position or '-'}" for s in output.standings)
    return f"{output.total}/120 (blind {output.blind_total}) · {positions}"


def _ranking(output: RankingOutput) -> str:
    top = ", ".join(f"{row.move_id} {row.total}" for row in output.ranked if row.recommended)
    return f"recommended: {top}"


def _jury(output: JuryOutput) -> str:
    return output.summary + (" · same family" if output.same_model_warning else "")


# The moves' authors and the debate's voices, whose work the board's scores and the jury judge.
DEBATERS = (Role.ANALYST, Role.CRITIC, Role.BOARD)


WORKFLOW = Workflow(
    name=plan.NAME,
    choice="Agency: strategic moves debated by a board",
    subject="company",
    stages=(
        Stage(
            plan.SOURCES,
            "L0 · Data",
            "Gathered by code: figures, news, posts, markets, competitors",
            run_sources,
        ),
        Stage(
            plan.INFERENCE,
            "L1 · Inference",
            "F1 reads the figures, F2 the documents, in parallel",
            run_inference,
            fan_outs=(INFERENCES,),
        ),
        Stage(
            plan.PROPOSALS,
            "L2 · Analysts",
            "Each persona proposes a low, a medium and a high-risk move; code merges duplicates",
            run_proposals,
            fan_outs=(PERSONAS,),
        ),
        Stage(
            plan.SANDBOX,
            "Sandbox",
            "A critic against three board members, turn by turn, every move at once; then the board scores",
            run_sandbox,
            fan_outs=(TURNS, SCORES),
        ),
        Stage(
            plan.FINAL,
            "Final",
            "Code adds up the scores and ranks the moves",
            run_final,
            fan_outs=(JURY_AUDITS,),
        ),
    ),
    kinds={
        SOURCES_KIND: StepKind(SOURCES_KIND, SourcesOutput, f"{TEMPLATES}/sources.html", _sources),
        INFERENCE_KIND: StepKind(INFERENCE_KIND, InferenceOutput, f"{TEMPLATES}/inference.html", _inference),
        PROPOSAL: StepKind(PROPOSAL, ProposalOutput, f"{TEMPLATES}/proposal.html", _proposal),
        MOVES: StepKind(MOVES, MovesOutput, f"{TEMPLATES}/moves.html", _moves),
        DEBATE: StepKind(DEBATE, DebateOutput, f"{TEMPLATES}/debate.html", _debate),
        RANKING: StepKind(RANKING, RankingOutput, f"{TEMPLATES}/ranking.html", _ranking),
        JURY: StepKind(JURY, JuryOutput, f"{TEMPLATES}/jury.html", _jury),
    },
    plan=plan.plan,
    ending=ending,
    profiles=profiles.profiles,
    configure=profiles.configure,
    describe=profiles.describe,
    artefact=agency_artefact,
    budget=profiles.budget,
    separate_judge=profiles.separate_judge,
    # Seed 003: the board's scores and the jury judge the analysts' moves and the debate on them.
    verdicts=(
        Judged(Role.SCORING, DEBATERS, "the board's scores", "the analysts' moves and the debate on them"),
        Judged(Role.JURY, DEBATERS, "the jury's verdicts", "the analysts' moves and the debate on them"),
    ),
    layered=True,
    fakes="agents.agency.fakes",
    surface="memos.pipeline.agency.desk",
)
