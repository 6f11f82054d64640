"""The run engine's job, run by the RQ worker: a run's stages, from the one named to the run's end.

Jobs take plain values (a run id, a stage name), never model instances, so a job enqueued before a restart
still means the same thing after it, and running one twice redoes nothing (memos.pipeline.driver).
"""

from __future__ import annotations

from memos.pipeline import driver
from memos.pipeline.hooks import hooks


def run_stage(run_id: str, stage: str) -> None:
    """A run from ``stage`` to its end, in this job (memos.pipeline.driver)."""
    try:
        driver.execute_stage(run_id, stage)
    finally:
        # The work-horse exits right after the job: the notices of a frozen version go first.
        hooks().before_exit()
