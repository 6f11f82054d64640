"""Re-running one stage of a finished run: the evaluation of a memo that was delivered "not evaluated".

A memo run whose evaluation failed (the evaluator's answer never fit its schema, or its endpoint never
answered) still finishes with its memo (memos.pipeline.memo.evaluation), in needs review, marked not
evaluated: ``memo_evaluated`` is the check a vote or a publication must pass. ``rerun_evaluation`` sends
that run back through the run engine from the evaluation stage only: its evaluation and memo steps go back
to pending, the run to queued at that stage (one conditional UPDATE from needs review, so two clicks cannot
both reopen it), and the engine's own job for the stage is queued once the change is committed
(memos.pipeline.driver.enqueue_stage). The data, the specialists and the synthesis are kept as they are;
the engine then rebuilds the memo with the verdict. This is the one way a finished run becomes active
again, and only a run that is waiting for a person (needs review) with a memo nobody could evaluate.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import ValidationError

from agents.memo.outputs import MemoOutput
from agents.memo.roster import MAX_EVALUATION_RERUNS, MemoConfig
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.pipeline.cards import publish_run
from memos.pipeline.memo.plan import EVALUATION, MEMO
from memos.pipeline.memo.plan import NAME as MEMO_WORKFLOW
from memos.services.access import can_start_runs
from memos.services.errors import ServiceError
from memos.services.runs import check_active_runs


def memo_evaluated(run: Run) -> bool:
    """Whether an evaluation stands behind the run's memo: False for a memo delivered not evaluated, and
    for a run with no finished memo at all. Votes and publication must check it."""
    raw = (
        AgentStep.objects.filter(run=run, stage=MEMO, key=MEMO, status=AgentStep.Status.DONE)
        .values_list("output", flat=True)
        .first()
    )
    if raw is None:
        return False
    try:
        return MemoOutput.model_validate(raw).evaluated
    except ValidationError:
        return False


def may_rerun(user: User, run: Run) -> bool:
    """The run's analyst (who started it or owns its brief), or a superuser; an analyst in role."""
    if not can_start_runs(user):
        return False
    return user.is_superuser or user.pk in (run.created_by_id, run.brief.owner_id)


def _waiting_for_evaluation(run: Run) -> bool:
    if run.workflow != MEMO_WORKFLOW or run.status != Run.Status.NEEDS_REVIEW:
        return False
    failed = AgentStep.objects.filter(
        run=run, stage=EVALUATION, key=EVALUATION, status=AgentStep.Status.FAILED
    ).exists()
    memo_done = AgentStep.objects.filter(run=run, stage=MEMO, key=MEMO, status=AgentStep.Status.DONE).exists()
    return failed and memo_done and not memo_evaluated(run)


def rerun_evaluation(*, run: Run, user: User) -> Run:
    """Queue the run's evaluation stage again; refused unless the memo was delivered not evaluated.

    Refused, with the reason: someone who is not the run's analyst, a run whose memo is evaluated or which
    is not waiting for review, a brief with another run active (the one-active-run-per-brief constraint),
    and a person with as many active runs as they may have."""
    if not may_rerun(user, run):
        raise ServiceError("Only the run's analyst may re-run its evaluation.")
    run_id = str(run.pk)
    try:
        with transaction.atomic():
            check_active_runs(user)
            locked = Run.objects.select_for_update().get(pk=run.pk)
            if not _waiting_for_evaluation(locked):
                raise ServiceError(
                    "Only a finished memo that was delivered not evaluated can have its evaluation re-run."
                )
            memo_config = MemoConfig.model_validate(locked.config)
            if memo_config.evaluation_reruns >= MAX_EVALUATION_RERUNS:
                raise ServiceError(
                    "This run's evaluation has been re-run as often as it may be; start a new run instead."
                )
            reruns = memo_config.evaluation_reruns + 1
            config = memo_config.model_copy(update={"evaluation_reruns": reruns}).model_dump()
            # Conditional on what was read under the lock: the one transition out of needs review.
            reopened = Run.objects.filter(
                pk=run.pk, status=Run.Status.NEEDS_REVIEW, lease=locked.lease
            ).update(
                status=Run.Status.QUEUED,
                stage=EVALUATION,
                stage_attempts=0,
                config=config,
                finished_at=None,
                heartbeat_at=timezone.now(),  # the watchdog waits as for any queued run before it steps in
                status_message=f"evaluation queued again (re-run {reruns})",
            )
            if not reopened:
                raise ServiceError("The run changed meanwhile; reload the page.")
            AgentStep.objects.filter(run=run, stage__in=[EVALUATION, MEMO]).update(
                status=AgentStep.Status.PENDING,
                output=None,
                summary="",
                error="",
                started_at=None,
                finished_at=None,
            )
            publish_run(run_id, with_steps=True)
            transaction.on_commit(lambda: driver.enqueue_stage(run_id, EVALUATION))
    except IntegrityError as exc:  # the one-active-run-per-brief constraint (memos.models.Run)
        raise ServiceError("Another run of this brief is queued or running; wait for it to finish.") from exc
    run.refresh_from_db()
    return run
