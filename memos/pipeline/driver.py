"""The run engine: runs any workflow as an ordered list of stages. Enqueue, claim, execute, finish or fail,
resume.

A job takes the run id and the stage to start from (never a model instance), claims that stage
(memos.pipeline.claims), runs its body under a heartbeat, and on success hands the run over to the next
stage in the same process (one statement, the same Redis lock, the same database connection: no queue
hop, no fork of another work-horse, no second claim) until the run ends. A run thus holds one worker from
its start to its end; more runs at once need more workers. A stage body
reads its inputs from PostgreSQL and writes each result as a step under its natural key, so running it twice
(a re-enqueued job after a killed worker) redoes nothing that finished, and the LLM ledger answers every call
that had completed. No transaction is held across an LLM call.

What ends a stage, and what happens to the run:
- the body returns: this worker goes on with the next stage, or the run finishes with the workflow's ending;
- ``StageFailed``, an answer that never fit its schema, a spent budget, a refused provider: the run fails
  with the reason, at once (trying again cannot help);
- ``LeaseLost``: another worker holds the run now; this one stops and changes nothing;
- a write the database refuses for its data (a value a column cannot take, a broken constraint): the run
  fails at once, the page saying so in words (the SQL goes to the log): the same write would be refused again;
- anything else (a timeout of the endpoint after its retries, a database outage, a bug): the error is
  recorded and the watchdog resumes the stage, at most ``RUN_MAX_STAGE_ATTEMPTS`` times in all; then the
  run fails with the last error. A run is never left running with nobody working on it and nobody coming.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import django_rq
import redis
from django.db import DatabaseError

from agents.llm.errors import BudgetExceeded, InvalidOutput, LLMError, TransientFailure
from agents.llm.priority import scheduled_work
from memos.live.events import flush_events
from memos.models import Run, StageClaim
from memos.pipeline import claims, fanout
from memos.pipeline.cards import publish_status
from memos.pipeline.claims import Hold, Refusal
from memos.pipeline.context import StageContext
from memos.pipeline.dbretry import retry_on_lost_connection
from memos.pipeline.errors import LeaseLost, StageFailed, described, recurs_unchanged, shown
from memos.pipeline.gateway import gateway
from memos.pipeline.hooks import hooks
from memos.pipeline.ledger import remember_budget
from memos.pipeline.liveness import Beater, Heartbeat
from memos.pipeline.registry import WORKFLOWS, workflow_for
from memos.pipeline.steps import said, unfinished_parts
from memos.pipeline.workflows import Ending, Unfinished, Workflow

log = logging.getLogger(__name__)

# A person's runs go on QUEUE, which every worker takes first; the desk's scheduled work (Run.scheduled: the
# week, a weekly screen, a refinement cycle) on SCHEDULED_QUEUE, which only the workers started for it take
# (scripts/run.sh, SCHEDULED_WORKERS), so a run the desk started on its own never holds the worker a person's
# run needs.
QUEUE = "default"
SCHEDULED_QUEUE = "scheduled"
QUEUES = (QUEUE, SCHEDULED_QUEUE)
Outcome = StageClaim.Outcome


def queue_for(scheduled: bool) -> str:
    return SCHEDULED_QUEUE if scheduled else QUEUE


def enqueue_stage(run_id: str, stage: str) -> None:
    """Queue the run's stage for a worker, on the queue its flag chooses (read here, so that no caller can
    put the desk's work before a person's)."""
    found = retry_on_lost_connection(
        lambda: Run.objects.filter(pk=run_id).values_list("scheduled", "workflow").first(),
        what="reading the run",
    )
    scheduled, workflow = found if found is not None else (False, "")
    # A job runs its run from the stage to the end; a workflow whose runs outlast the queue's timeout (the
    # week, hours on the embedded model) says how long a worker may hold one. Past it RQ kills the
    # work-horse, and the run resumes from its stage, one attempt spent.
    timeout = WORKFLOWS[workflow].job_timeout_s if workflow in WORKFLOWS else None
    django_rq.get_queue(queue_for(bool(scheduled))).enqueue(
        "memos.pipeline.jobs.run_stage",
        run_id,
        stage,
        description=f"run {run_id[:8]}: {stage}",
        **({"job_timeout": timeout} if timeout is not None else {}),
    )


def run_inline(run_id: str) -> None:
    """Every remaining stage in this process, in order: ``analyze --inline`` and the benchmarks."""
    run = _read(run_id)
    _execute_from(run, run.stage or workflow_for(run.workflow).first_stage)


def execute_stage(run_id: str, stage: str) -> None:
    """Run ``stage`` if the run is waiting for it, then every following stage while this worker holds it."""
    _execute_from(_read(run_id), stage)


def _read(run_id: str) -> Run:
    return retry_on_lost_connection(
        lambda: Run.objects.select_related("brief__company").get(pk=run_id), what="reading the run"
    )


def _execute_from(run: Run, stage: str) -> None:
    run_id = str(run.pk)
    workflow = workflow_for(run.workflow)
    if not run.is_active or workflow.is_past(run.stage, stage):
        return
    claimed = claims.claim_stage(run_id, stage, first=stage == workflow.first_stage)
    if isinstance(claimed, Refusal):
        log.info("run %s: not running %s: %s", run_id, stage, claimed.reason)
        return
    # The parallel steps' threads connect to the database while the first stage works, not on a call's path.
    fanout.warm(gateway().settings.max_concurrency)
    remember_budget(run)
    hold: Hold | None = claimed
    try:
        # The desk's own work asks the model after people (agents.llm.limiter); its fan-outs inherit the mark.
        with scheduled_work(run.scheduled), Beater() as beater:
            while hold is not None:
                hold = _execute(workflow, hold, beater)
    finally:
        # The page hears that the run has ended before this returns. (The notices of a version it froze are
        # e-mailed in the background; a process about to exit waits for them: memos.pipeline.jobs.)
        flush_events()


def _execute(workflow: Workflow, hold: Hold, beater: Beater) -> Hold | None:
    """Run the held stage; the hold on the next stage when this worker goes on with it."""
    outcome: str = Outcome.ERROR
    error, following = "", None
    try:
        # Read under the claim: what the run looks like now that this worker holds it (a stage handed over
        # by this worker goes on with the run its hand-over brought up to date).
        run = hold.run or Run.objects.select_related("brief__company").get(pk=hold.run_id)
        publish_status(run)  # the page hears of the stage from here
        ctx = StageContext(run=run, workflow=workflow, hold=hold)
        with beater.beating(Heartbeat(hold.run_id, hold.lease, hold.lock, hold.lost, claims.stamp_heartbeat)):
            outcome, error, following = _run_body(workflow, ctx)
        if outcome == Outcome.ERROR:
            # Only now that the heartbeat has stopped: a last beat must not hide the run from the watchdog.
            outcome = _resume_or_fail(hold, error)
    finally:
        if following is None:
            claims.release(hold, outcome, error)
    return following


def _run_body(workflow: Workflow, ctx: StageContext) -> tuple[str, str, Hold | None]:
    """(claim outcome, error, hold on the next stage) of running the stage's body and moving the run on."""
    hold = ctx.hold
    try:
        try:
            workflow.stage(hold.stage).body(ctx)
        finally:
            ctx.settle()  # nothing of the stage may land after it has ended, whichever way it ended
        return Outcome.FINISHED, "", _move_on(workflow, ctx)
    except LeaseLost as exc:
        log.warning("run %s: %s", hold.run_id, exc)
        return Outcome.LOST, str(exc), None
    except (StageFailed, InvalidOutput, BudgetExceeded) as exc:
        return _fail(hold, _failure_message(hold.stage, exc))
    except LLMError as exc:
        if isinstance(exc, TransientFailure):  # the endpoint may answer later: resume, bounded
            return Outcome.ERROR, f"{type(exc).__name__}: {exc}", None
        return _fail(hold, _failure_message(hold.stage, exc))
    except Exception as exc:
        log.exception("run %s: the %s stage raised", hold.run_id, hold.stage)
        error = described(exc)  # a database's own message (its SQL) goes to the log only
        # Data the database refused would be refused again on every attempt: the run fails at once.
        return (
            _fail(hold, f"the {hold.stage} stage stopped: {error}")
            if recurs_unchanged(exc)
            else (Outcome.ERROR, error, None)
        )


def _move_on(workflow: Workflow, ctx: StageContext) -> Hold | None:
    """Hand the run over to the next stage, or finish it with the workflow's ending."""
    following = workflow.following(ctx.hold.stage)
    if following is not None:
        hold = claims.hand_over(ctx.hold, following, ctx.run)
        hold.earlier = ctx.handed_on()  # memos.pipeline.earlier: the next stage reads only what it lacks
        return hold
    ending, unfinished = workflow.ending(ctx), unfinished_parts(ctx.run_id)
    if unfinished:
        # A part that did not finish is said, whatever the workflow's own ending thought of it: the run needs
        # a person, and what it froze carries the parts it lacks.
        ending = needs_review(ending, unfinished)
    # Built before the transaction: it only reads the run's outputs. None: the run made nothing new to freeze
    # (a deck's refinement cycle that changed nothing).
    artefact = workflow.artefact(ctx) if workflow.artefact is not None else None
    if artefact is not None and unfinished:
        artefact = replace(artefact, unfinished=unfinished)
    if artefact is None:
        claims.finish(ctx.hold, ending.status, ending.message)
        return None
    # Its files are rendered here, under the heartbeat and outside the transaction: freezing stores them.
    prepared = hooks().prepare(ctx.run, artefact)
    claims.finish(
        ctx.hold,
        ending.status,
        ending.message,
        also=lambda: hooks().freeze(ctx.run, artefact, prepared),
    )
    return None


def needs_review(ending: Ending, unfinished: tuple[Unfinished, ...]) -> Ending:
    """The run's ending once parts of it did not finish: needs review (a failed run stays failed), its
    message naming each part that is not already named."""
    if ending.status == Run.Status.FAILED:
        return ending
    missing = tuple(part for part in unfinished if part.step not in ending.message)
    # Joined as one sentence: "... from the run page; not finished: ...", never ".; not finished".
    message = f"{ending.message.rstrip('.')}; {said(missing)}" if missing else ending.message
    return Ending(Run.Status.NEEDS_REVIEW, message.strip("; "))


def _failure_message(stage: str, exc: Exception) -> str:
    if isinstance(exc, StageFailed):
        return str(exc)
    if isinstance(exc, BudgetExceeded):
        return f"the run's token budget is spent, so the {stage} stage stopped: {exc}"
    return f"the {stage} stage stopped: {shown(exc) if isinstance(exc, LLMError) else exc}"


def _fail(hold: Hold, message: str) -> tuple[str, str, None]:
    try:
        claims.fail(hold, message)
    except LeaseLost as lost:
        return Outcome.LOST, str(lost), None
    return Outcome.FAILED, message, None


def _resume_or_fail(hold: Hold, error: str) -> str:
    """Record the error; resume later if attempts remain, else fail the run with it. Returns the outcome."""
    attempts = claims.max_attempts()
    try:
        if hold.attempt >= attempts:
            claims.fail(hold, f"the {hold.stage} stage failed {hold.attempt} times; the last error: {error}")
            return Outcome.FAILED
        claims.resume_later(
            hold,
            f"the {hold.stage} stage hit an error ({error}); it will be resumed "
            f"(attempt {hold.attempt} of {attempts})",
        )
    except LeaseLost:
        return Outcome.LOST
    except (DatabaseError, redis.RedisError) as unreachable:
        # Nothing can be written now; the heartbeat has stopped, so the watchdog will come for the run.
        log.warning("run %s: could not record the error (%s)", hold.run_id, unreachable)
    return Outcome.ERROR
