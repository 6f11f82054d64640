"""The sandbox stage (seed 004's layers 3 and 4): every debated move's debate, concurrently, on whichever
worker is free. Each debate is a sub-step of the stage (``DEBATES``, on the engine's memos.pipeline.substeps):
claimed by one worker at a time, every turn fenced by the move's lease, its heartbeat stamped while it runs.

The stage's holder enqueues one job per open move for the other workers, then debates moves itself, at most
``AGENCY_MOVES_PER_WORKER`` at once (each a thread of the outer pool, whose calls run on the call pool under
the endpoint's concurrency bound). It takes over a move whose worker went quiet (a kill -9: the debate goes
on from its rows, and the ledger answers every call that had completed), turns each finished move into its
step (the rows summed up by code), and ends when every move has its final scores or has failed.

``AGENCY_SEQUENTIAL_MOVES`` debates one move at a time on the holder alone: the seed's own order (seed 003's
tier 3), with the same rows and the same ranking.

A move whose debate met a model answer that never fit its schema fails alone, with the reason. An error the
endpoint may get over (a timeout after its retries), a spent budget or a database outage stops the holder
from taking more moves; the debates under way finish, and the error ends the stage, which the watchdog
resumes from the rows (memos.pipeline.driver).
"""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from functools import partial

from django.db.models import Max, Q
from django.utils import timezone
from pydantic import ValidationError
from rq import get_current_job

from agents.agency.config import AgencySettings
from agents.agency.outputs import DebateOutput
from agents.llm.errors import BudgetExceeded, LLMError, TransientFailure
from memos.models import AgentStep, DebateTurn, Move, Run
from memos.pipeline import fanout
from memos.pipeline.agency.debate import Debate
from memos.pipeline.agency.debate_inputs import DebateInputs
from memos.pipeline.agency.plan import SANDBOX, debate_key
from memos.pipeline.agency.settings import agency_settings
from memos.pipeline.agency.turns import MoveHold
from memos.pipeline.context import StageContext
from memos.pipeline.errors import UNREADABLE, LeaseLost, StageFailed, shown
from memos.pipeline.gateway import gateway
from memos.pipeline.substeps import Heartbeats, SubSteps, holder_name

log = logging.getLogger(__name__)
POLL_S = 0.25
Status = AgentStep.Status

# A move to debate is neither merged into another, nor debated to its end, nor failed.
DEBATES = SubSteps(
    model=Move,
    stage=SANDBOX,
    key="move_id",
    unfinished=Q(merged_into="", debated_at__isnull=True, failure=""),
    job="memos.pipeline.agency.sandbox.debate_move",
    what="debate",
)


def _settings() -> AgencySettings:
    return agency_settings()


def summary_of(inputs: DebateInputs, move: Move) -> DebateOutput:
    """A debated move's outcome, from its rows (whoever debated it)."""
    return Debate(gateway(), inputs, MoveHold(row=move, lease=move.lease)).summary()


def mark_debated(hold: MoveHold) -> None:
    hold.write(
        lambda: Move.objects.filter(pk=hold.row.pk).update(debated_at=timezone.now()),
        what="ending a debate",
    )


def mark_failed(hold: MoveHold, reason: str) -> None:
    hold.write(lambda: Move.objects.filter(pk=hold.row.pk).update(failure=reason[:2000]), what="a failure")


def outcome(hold: MoveHold, debate: Debate) -> None:
    """Debate the held move to its end and say how it ended in its row. Raises what should stop the worker
    from taking more moves (an error the endpoint may get over, a spent budget, a database outage); the
    move is given back for another attempt."""
    try:
        debate.run()
    except LeaseLost:
        return  # another worker took the move over: it is theirs now
    except (TransientFailure, BudgetExceeded):
        hold.release()
        raise
    except LLMError as exc:
        # An answer that never fit its schema, a refused provider: this move only.
        mark_failed(hold, shown(exc))
        return
    except ValidationError:
        # A stored answer this code cannot read back: deterministic, so retrying the stage would meet it
        # again and lose every other move's finished debate. This move only, said in words.
        log.exception(
            "move %s of run %s: a stored answer could not be read back",
            hold.row.move_id,
            hold.row.run_id,
        )
        mark_failed(hold, UNREADABLE)
        return
    except BaseException:
        hold.release()
        raise
    mark_debated(hold)


@dataclass
class Holder:
    """The stage's holder: its own debates under way, and the steps it has closed."""

    ctx: StageContext
    inputs: DebateInputs
    steps: dict[str, AgentStep]
    limit: int
    worker: str = field(default_factory=holder_name)
    beat: Heartbeats = field(default_factory=Heartbeats)
    running: dict[Future[None], MoveHold] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)
    error: BaseException | None = None

    @property
    def run_id(self) -> str:
        return self.ctx.run_id

    def open_steps(self) -> list[str]:
        return [
            move
            for move, step in self.steps.items()
            if step.status not in (Status.DONE, Status.SKIPPED, Status.FAILED)
        ]

    def close_finished(self) -> None:
        """Each move debated to its end (by anyone) becomes its finished step; a failed one, a failed step."""
        waiting = self.open_steps()
        if not waiting:
            return
        for move in Move.objects.filter(run_id=self.run_id, move_id__in=waiting).exclude(
            debated_at=None, failure=""
        ):
            step = self.steps[move.move_id]
            if move.debated_at is not None:
                self.ctx.finish(step, summary_of(self.inputs, move))
            else:
                self.ctx.fail_step(step, f"{step.title}: {move.failure}")

    def collect(self) -> None:
        """The holder's own debates that ended: an error stops it from taking more moves."""
        for future in [future for future in self.running if future.done()]:
            hold = self.running.pop(future)
            self.beat.remove(hold)
            error = future.exception()
            if error is not None and self.error is None:
                log.warning("run %s: the debate of %s stopped: %s", self.run_id, hold.row.move_id, error)
                self.error = error

    def take_more(self) -> None:
        if self.error is not None:
            return
        mine = {hold.row.pk for hold in self.running.values()}
        for move in DEBATES.claimable(self.run_id):
            if len(self.running) >= self.limit:
                return
            if move.pk in mine or move.move_id not in self.steps:
                continue
            self.ctx.check()  # no new debate for a stage this worker no longer holds
            hold = DEBATES.claim(move, worker=self.worker)
            if hold is None:
                continue
            self.beat.add(hold)
            if self.steps[move.move_id].status == Status.PENDING:
                self.ctx.start(self.steps[move.move_id])
            debate = Debate(gateway(), self.inputs, hold)
            self.running[fanout.start_outer(partial(outcome, hold, debate), size=self.limit)] = hold

    def show_progress(self) -> None:
        """Redraw the card of each move under debate (anyone's) when it reaches a new round."""
        waiting = self.open_steps()
        reached = (
            DebateTurn.objects.filter(move__run_id=self.run_id, move__move_id__in=waiting)
            .values_list("move__move_id")
            .annotate(last=Max("round"))
        )
        total = self.inputs.agency.rounds
        for move_id, last in reached:
            if self.steps[move_id].status == Status.PENDING:  # another worker took it up
                self.ctx.start(self.steps[move_id])
            if self.rounds.get(move_id) != last:
                self.rounds[move_id] = last
                self.ctx.progress(self.steps[move_id], f"round {last} of {total}")

    def wait(self) -> None:
        """Until one of the holder's debates ends, or a moment passes (another worker's may end)."""
        if self.running:
            wait(list(self.running), timeout=POLL_S, return_when=FIRST_COMPLETED)
        else:
            self.ctx.hold.lost.wait(POLL_S)


def run_sandbox(ctx: StageContext) -> None:
    inputs = DebateInputs.of(ctx.run)
    steps = {move.move_id: ctx.step(debate_key(move.move_id)) for move in inputs.merged.debated}
    sequential = inputs.agency.sequential
    holder = Holder(ctx, inputs, steps, limit=1 if sequential else _settings().moves_per_worker)
    holder.close_finished()  # a resumed stage: moves debated to their end before it stopped
    # Other workers can help only a stage run by a worker (``--inline`` runs it in this process alone).
    if not sequential and get_current_job() is not None:
        DEBATES.enqueue(ctx.run_id, [m.move_id for m in DEBATES.claimable(ctx.run_id) if m.move_id in steps])
    try:
        while holder.open_steps():
            holder.collect()
            if holder.error is not None and not holder.running:
                break
            holder.take_more()
            holder.wait()
            holder.close_finished()
            holder.show_progress()
    finally:
        holder.beat.stop()
        for future in list(holder.running):  # the stage is stopping: its debates end first
            future.exception()
        holder.collect()
    if holder.error is not None:
        raise holder.error
    if not any(step.status == Status.DONE for step in steps.values()):
        raise StageFailed("no move's debate finished; see each debate's error")


def debate_move(run_id: str, move_id: str) -> None:
    """The RQ job (``DEBATES.enqueue``): debate the move if nobody has it and the run is still at the
    sandbox. An error gives the move back; the stage's holder takes it over or ends the stage with the
    error."""
    hold = DEBATES.take(run_id, move_id, worker=holder_name())
    if hold is None:
        return
    run = Run.objects.select_related("brief__company").filter(pk=run_id).first()
    if run is None:
        return  # deleted meanwhile, and its moves with it
    with Heartbeats() as beat:
        beat.add(hold)
        try:
            outcome(hold, Debate(gateway(), DebateInputs.of(run), hold))
        except Exception as exc:  # noqa: BLE001 - the move was given back; the holder decides what it means
            log.warning("run %s: the debate of %s stopped here: %s", run_id, move_id, exc)
