"""The desk's week as a workflow of the run engine: its runs are ``Run.workflow == "week"``, its versions
(the digests) kind ``week``. It asks no model itself: its parts do, each a run of its own workflow."""

from __future__ import annotations

from agents.week.outputs import DecksOutput, DigestOutput, LookOutput, NamesOutput, ScreenOutput
from memos.pipeline.composition import Screens
from memos.pipeline.week import plan, profiles
from memos.pipeline.week.breadths import FOLLOW_UPS, LOOKS
from memos.pipeline.week.digest import digest_artefact, ending, run_digest
from memos.pipeline.week.parts import played
from memos.pipeline.week.stages import run_decks, run_looks, run_names, run_screen
from memos.pipeline.workflows import ConfigurationError, Stage, StepKind, Workflow

TEMPLATES = "memos/step_documents/week"


def screened_watchlist() -> list[str]:
    """The watchlist a week screens when its brief names none: that of the workflow that screens."""
    # The registry loads this module: it is read when asked, never at import.
    from memos.pipeline.registry import workflow_for

    found = played(Screens)
    if found is None:
        raise ConfigurationError("No workflow of this desk screens a watchlist: the week cannot start.")
    return workflow_for(found[0]).default_watchlist()


def _screen(output: ScreenOutput) -> str:
    if output.problem:
        return output.problem
    flags = output.flags
    counts = " · ".join(f"{flags.get(flag, 0)} {flag.lower()}" for flag in ("RED", "YELLOW", "GREEN"))
    return f"week ending {output.as_of}: {counts}"


def _names(output: NamesOutput) -> str:
    chosen = ", ".join(f"{c.name.symbol} ({c.name.flag})" for c in output.chosen) or "none"
    return f"{chosen}; {len(output.skipped)} left for another week"


def _look(output: LookOutput) -> str:
    if output.skipped:
        return f"{output.symbol}: {output.skipped}"
    if output.part is None:
        return output.symbol
    said = output.recommendation or output.part.status
    return f"{output.symbol}: {said} · {len(output.drift)} drift · {output.part.calls} calls"


def _decks(output: DecksOutput) -> str:
    started = sum(1 for deck in output.decks if deck.part)
    return output.note or f"{started} cycle(s), {len(output.decks) - started} not started"


def _digest(output: DigestOutput) -> str:
    return (
        f"{len(output.looks)} looks · {len(output.unfinished)} not finished · {output.llm_calls} calls · "
        f"{output.tokens:,} tokens"
    )


WORKFLOW = Workflow(
    name=plan.NAME,
    choice="Week: the screen, a closer look at flagged names, the followed decks, one digest",
    subject="watchlist",
    stages=(
        Stage(plan.SCREEN, "The screen", "The watchlist screened for the week (a screen run)", run_screen),
        Stage(
            plan.NAMES, "The names", "Code picks the flagged names and writes each one's question", run_names
        ),
        Stage(
            plan.LOOKS,
            "Closer looks",
            "A quick memo on each name, with drift against its memo before (memo runs)",
            run_looks,
            fan_outs=(LOOKS,),
        ),
        Stage(
            plan.DECKS,
            "Decks followed",
            "The next refinement cycle of each deck the committee follows on a flagged name",
            run_decks,
            fan_outs=(FOLLOW_UPS,),
        ),
        Stage(plan.DIGEST, "The digest", "Code writes the week's digest from its parts", run_digest),
    ),
    kinds={
        plan.SCREEN_KIND: StepKind(plan.SCREEN_KIND, ScreenOutput, f"{TEMPLATES}/screen.html", _screen),
        plan.NAMES_KIND: StepKind(plan.NAMES_KIND, NamesOutput, f"{TEMPLATES}/names.html", _names),
        plan.LOOK_KIND: StepKind(plan.LOOK_KIND, LookOutput, f"{TEMPLATES}/look.html", _look),
        plan.DECKS_KIND: StepKind(plan.DECKS_KIND, DecksOutput, f"{TEMPLATES}/decks.html", _decks),
        plan.DIGEST_KIND: StepKind(plan.DIGEST_KIND, DigestOutput, f"{TEMPLATES}/digest.html", _digest),
    },
    plan=plan.plan,
    ending=ending,
    profiles=profiles.profiles,
    configure=profiles.configure,
    describe=profiles.describe,
    artefact=digest_artefact,
    starts_parts=True,
    budget=profiles.budget,
    surface="memos.pipeline.week.desk",
    default_watchlist=screened_watchlist,
    offered=False,
    # The week runs its screen, memos and cycles inside its job: on the embedded model that is hours (its
    # first embedded week's job was killed at the queue's one hour, mid-screen, and resumed).
    job_timeout_s=24 * 3600,
)
