"""Threads for a stage's parallel steps (the specialists' calls) and its background writes, kept for the
life of the process.

A thread of a fresh pool opens its own PostgreSQL connection at its first query: 10-30 ms (SCRAM
authentication, a new backend) on the path of every parallel call of every stage. These threads outlive
the stage and the run, so each connects once per process, and ``warm`` opens those connections while the
run's first stage works, before any call needs them. A forked work-horse makes threads of its own (threads
do not survive a fork, and a parent's connection must never be used by a child). ``shutdown`` closes every
connection the threads opened (a test database can only be dropped when nobody is connected to it).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from agents.llm.fanning import inside
from memos.pipeline.breadth import Breadth

T = TypeVar("T")
K = TypeVar("K")

WARM_TIMEOUT_S = 5.0


# Every fan-out a process has started, by name: a test runs each workflow and checks each was declared on
# its stage (a fan-out nobody can see on the run page is one nobody justified).
started: dict[str, Breadth] = {}


class _Pool:
    """One executor per process, replaced by a larger one when a larger bound is asked for."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._size = 0
        self._opened: set[BaseDatabaseWrapper] = set()  # the connections of this pool's threads
        self._retired: list[ThreadPoolExecutor] = []

    def executor(self, size: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid() or size > self._size:
                if self._pid != os.getpid():  # a forked child: the parent's threads are not ours
                    self._executor, self._opened, self._retired = None, set(), []
                if self._executor is not None:
                    self._executor.shutdown(wait=False)  # its threads finish what they hold and end
                    self._retired.append(self._executor)
                self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix=self.name)
                self._pid, self._size = os.getpid(), size
            return self._executor

    def submit(self, size: int, task: Callable[[], T]) -> Future[T]:
        # The task runs in a copy of its submitter's context variables, as if it ran where it was
        # submitted: a scheduled run's calls keep their lower priority on these threads
        # (agents.llm.priority). A fan-out's own mark is set inside the task (in_parallel), over the
        # submitter's.
        context = contextvars.copy_context()

        def tracked() -> T:
            wrapper = connections[DEFAULT_DB_ALIAS]
            with self._lock:
                self._opened.add(wrapper)
            return context.run(task)

        return self.executor(size).submit(tracked)

    def shutdown(self) -> None:
        with self._lock:
            executors = [*self._retired, *([self._executor] if self._executor else [])]
            self._executor, self._size, self._retired = None, 0, []
            opened, self._opened = self._opened, set()
        if self._pid != os.getpid():
            return
        for executor in executors:
            executor.shutdown(wait=True)
        for wrapper in opened:  # each belonged to a thread that has ended: closing it here is safe
            wrapper.inc_thread_sharing()
            try:
                wrapper.close()
            finally:
                wrapper.dec_thread_sharing()


_pool = _Pool("fan-out")
# Work that itself fans out (an agency's move debates, each running rounds of parallel calls) runs here, apart
# from the calls: a debate waiting on its calls must never hold a thread the calls need.
_outer = _Pool("outer")
_writer = _Pool("step-writer")  # one thread: a stage's background writes, in order, never behind a call


def warm(size: int) -> None:
    """Start ``size`` pool threads and the writer, and open their database connections, without waiting."""
    size = max(1, size)
    _writer.submit(1, _connect)
    together = threading.Barrier(size, timeout=WARM_TIMEOUT_S)

    def connect_then_wait() -> None:
        _connect()
        # Wait for the others, so that each task occupies its own thread (an idle thread would take two).
        with contextlib.suppress(threading.BrokenBarrierError):
            together.wait()

    for _ in range(size):
        _pool.submit(size, connect_then_wait)


def _connect() -> None:
    connections[DEFAULT_DB_ALIAS].ensure_connection()


def background(write: Callable[[], None]) -> Future[None]:
    """Run a small database write on the process's writer thread; the caller waits on the future later."""
    return _writer.submit(1, write)


def beside(task: Callable[[], T]) -> Future[T]:
    """Start one task (a call) now on a pool thread, unmarked, so that its caller makes something else while
    it is in flight (``StageContext.prepare_next``) and then waits on the future. Not a fan-out: the task
    is the stage's one call, so it may be a verdict."""
    return _pool.submit(1, task)


def in_parallel(
    tasks: Iterable[tuple[K, Callable[[], T]]], *, limit: int, breadth: Breadth
) -> Iterator[tuple[K, Future[T]]]:
    """Start every task now, at most ``limit`` running at once, each marked as a task of ``breadth`` (a
    verdict asked from a fan-out of generators is refused); the iterator gives (key, finished future) as
    each task ends."""
    gate = threading.BoundedSemaphore(max(1, limit))
    started[breadth.name] = breadth

    def bounded(task: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            with gate, inside(breadth.mark):
                return task()

        return run

    futures = {_pool.submit(max(1, limit), bounded(task)): key for key, task in tasks}
    return ((futures[future], future) for future in as_completed(futures))


def start_outer(task: Callable[[], T], *, size: int, breadth: Breadth | None = None) -> Future[T]:
    """Start ``task`` now on the outer pool (of at least ``size`` threads) and return its future: work that
    fans out itself (a move's debate, a week's closer looks) whose caller goes on meanwhile. With a
    ``breadth``, the task runs marked as one of that declared fan-out's (a week's parts)."""
    if breadth is None:
        return _outer.submit(max(1, size), task)
    started[breadth.name] = breadth
    mark = breadth.mark

    def marked() -> T:
        with inside(mark):
            return task()

    return _outer.submit(max(1, size), marked)


def shutdown() -> None:
    """Stop the threads and close their connections."""
    _pool.shutdown()
    _outer.shutdown()
    _writer.shutdown()
