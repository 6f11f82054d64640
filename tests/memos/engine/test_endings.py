"""A run's ending once parts of it did not finish: needs review, its message naming each part not already
named, read as one sentence."""

from __future__ import annotations

from memos.models import Run
from memos.pipeline.driver import needs_review
from memos.pipeline.workflows import Ending, Unfinished

REPORT = Unfinished(step="Evaluator's report", reason="the answer did not fit its schema, twice")


def test_the_parts_that_did_not_finish_are_named_after_the_workflows_own_message() -> None:
    ending = Ending(Run.Status.DONE, "memo ready. Re-run the evaluation from the run page.")
    assert needs_review(ending, (REPORT,)) == Ending(
        Run.Status.NEEDS_REVIEW,
        "memo ready. Re-run the evaluation from the run page; not finished: Evaluator's report (the answer "
        "did not fit its schema, twice)",
    )


def test_a_part_already_named_is_not_named_again_and_a_failed_run_stays_failed() -> None:
    named = Ending(Run.Status.DONE, "Evaluator's report failed")
    assert needs_review(named, (REPORT,)) == Ending(Run.Status.NEEDS_REVIEW, "Evaluator's report failed")
    failed = Ending(Run.Status.FAILED, "the data stage stopped")
    assert needs_review(failed, (REPORT,)) == failed
