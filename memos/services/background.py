"""One daemon thread per process for work a commit hands off (the notices' e-mails, the versions' PDFs), so
the committing caller never waits for it.

Items put while the thread is busy are handled together on its next turn, each once (a burst of commits is
one e-mail sweep; a version asked for twice is printed once). A forked child (an RQ work-horse) inherits the
object but not the thread, so it starts its own. ``wait_idle`` is for a process about to exit (a work-horse,
through memos.pipeline.hooks.before_exit), a test or a benchmark.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from django.db import close_old_connections

log = logging.getLogger(__name__)

Item = TypeVar("Item", bound=Hashable)


class ProcessThread(Generic[Item]):
    def __init__(self, name: str, handle: Callable[[list[Item]], object], *, failed: str) -> None:
        self._name = name
        self._handle = handle  # the items waiting, each once, in the order they came
        self._failed = failed  # what the log says when a turn raises (the next turn tries again)
        self._items: queue.Queue[Item] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._idle = threading.Event()
        self._idle.set()

    def put(self, item: Item) -> None:
        self._ensure_thread()
        self._idle.clear()
        self._items.put(item)

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether every item put so far was handled within ``timeout_s``."""
        return self._idle.wait(timeout_s)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            waiting = [self._items.get()]
            while not self._items.empty():
                waiting.append(self._items.get_nowait())
            try:
                self._handle(list(dict.fromkeys(waiting)))
            except Exception:
                log.exception(self._failed)
            finally:
                close_old_connections()
                if self._items.empty():
                    self._idle.set()
