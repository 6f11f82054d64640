"""Whose call this is: a person's (the default) or the desk's scheduled work (issue 33, "a person before a
schedule").

The run engine marks a scheduled run's execution with ``scheduled_work()`` (memos.pipeline.driver), the
fan-out threads inherit the mark from whoever submitted their task (memos.pipeline.fanout), and the LLM
limiter reads it when a call asks for a slot (agents.llm.limiter): a scheduled call waits while a person's
call waits for the same endpoint, and never takes the slots kept for people. A context variable, not an
argument, so that no workflow's code has to carry it through every call it makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SCHEDULED: ContextVar[bool] = ContextVar("llm_priority_scheduled", default=False)


def is_scheduled() -> bool:
    """Whether the calling code runs the desk's scheduled work (False: a person's, which goes first)."""
    return _SCHEDULED.get()


@contextmanager
def scheduled_work(scheduled: bool = True) -> Iterator[None]:
    """Run the block as scheduled work (or, with ``scheduled=False``, as a person's)."""
    token = _SCHEDULED.set(scheduled)
    try:
        yield
    finally:
        _SCHEDULED.reset(token)
