"""A fan-out's declaration: what its parallel calls are and why they may run side by side (seed 003)."""

from __future__ import annotations

from dataclasses import dataclass

from agents.llm.fanning import FanOutMark


@dataclass(frozen=True)
class Breadth:
    """What a fan-out is and why its calls may run side by side, declared once where it is asked and on its
    stage (memos.pipeline.workflows.Stage.fan_outs: the run page shows it under the stage's heading).

    ``distinct_verdicts`` is empty for generators; a fan-out of verdicts says what makes each its own (another
    subject, lens or model). The gateway refuses a verdict role asked from a fan-out of generators
    (agents.llm.fanning): seed 003 never fans a verdict out across clones of one model."""

    name: str  # "specialists"
    why: str  # "each reads its own evidence; none needs another's brief"
    distinct_verdicts: str = ""

    @property
    def mark(self) -> FanOutMark:
        return FanOutMark(self.name, self.distinct_verdicts)
