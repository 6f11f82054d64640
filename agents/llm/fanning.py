"""Seed 003: never fan out a verdict across clones of one model.

Independent generators may run side by side (six specialists, one slide per section): their breadth is what
makes the work faster and wider. A verdict asked N times of one model family and summed is one opinion counted
N times, and looks like agreement. So every fan-out declares what it is (memos.pipeline.fanout.Breadth), and
the gateway refuses a verdict role asked from inside a fan-out that did not declare what makes each of its
verdicts its own: another subject (each move judged once), another lens (each board member's question), or
another model (the memo's second evaluator). The mark lives in a context variable set on the fan-out's worker
thread for the length of one task.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from agents.llm.roles import VERDICT_ROLES


class VerdictFannedOut(RuntimeError):
    """A verdict role was asked from a fan-out of generators: a mistake in the code, never the model's."""


@dataclass(frozen=True)
class FanOutMark:
    name: str  # the fan-out's declared name
    distinct_verdicts: str  # what makes each verdict in it its own; "" for a fan-out of generators


_CURRENT: ContextVar[FanOutMark | None] = ContextVar("fan_out", default=None)


@contextmanager
def inside(mark: FanOutMark) -> Iterator[None]:
    """Mark the calling thread as running one task of the fan-out ``mark``."""
    token = _CURRENT.set(mark)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def check_role(role: str) -> None:
    """Refuse a verdict role asked from inside a fan-out of generators."""
    mark = _CURRENT.get()
    if mark is not None and not mark.distinct_verdicts and role in VERDICT_ROLES:
        raise VerdictFannedOut(
            f"the verdict role {role!r} was asked from the fan-out {mark.name!r}, which declares generators "
            "only: seed 003 never fans a verdict out across clones of one model. Ask it once, or from a "
            "fan-out that declares what makes each verdict its own (another subject, lens or model)."
        )
