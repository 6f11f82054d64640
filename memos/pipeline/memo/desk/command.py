"""``manage.py analyze TICKER --brief "..." [--profile quick|full] [--wait | --inline]``.

Starts an investment-memo run (seed 000) on a brief, printing the run's URL; ``--wait`` follows the RQ
worker's progress with a progress bar, ``--inline`` runs every stage in this process (no worker needed).
Exit status 0 when the memo is done, 3 when it needs review (not evaluated, or the evaluator's REVISE), 1
when the run failed (with its reason), 2 for bad input (memos.management.run_command).
"""

from __future__ import annotations

from typing import Any

from agents.memo.outputs import MemoOutput
from memos.management.run_command import RunCommand
from memos.models import AgentStep, Run
from memos.pipeline.memo.plan import NAME as MEMO


class MemoCommand(RunCommand):
    help = "Start an investment-memo run for a ticker and a brief; print its URL (and wait for it)."
    workflow = MEMO
    default_profile = "full"

    def finish(self, run: Run, seconds: float, options: dict[str, Any]) -> None:
        memo = MemoOutput.model_validate(AgentStep.objects.get(run=run, kind="memo").output)
        decision = memo.firewall
        self.stdout.write(
            f"memo done in {seconds:.1f} s: recommendation {decision.final}"
            f"{' (conditional)' if decision.conditional else ''}"
            f" (stated {decision.stated}); evaluator verdict "
            f"{memo.verdict.decision if memo.verdict is not None else 'none: not evaluated'}"
        )
        if run.status == Run.Status.NEEDS_REVIEW:
            self.stdout.write(f"needs review: {run.status_message}")  # and the command exits 3
