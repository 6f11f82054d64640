"""Live-update events: typed payloads, one group-name function, sent only after the transaction commits."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from typing import Literal

from channels.layers import get_channel_layer
from django.db import transaction
from pydantic import BaseModel

log = logging.getLogger(__name__)


def run_group(run_id: object) -> str:
    return f"run.{run_id}"


class RunEvent(BaseModel):
    """What the run page needs to redraw one part: which kind, which run, and the server-rendered fragment."""

    kind: Literal["status", "agent", "document"]
    run_id: str
    target: str
    html: str


class _Sender:
    """Sends events from one background thread with its own event loop, in the order they were queued.

    A pipeline step must not wait on Redis for every status change (a few ms each, dozens per run); it hands
    the event over and goes on. ``flush`` waits for the queue to drain: a stage calls it before its process
    may exit (an RQ work-horse ends with ``os._exit``, which would drop what is still queued).
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[RunEvent] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def put(self, event: RunEvent) -> None:
        self._ensure_thread()
        self._queue.put(event)

    def flush(self, timeout_s: float = 5.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)

    def _ensure_thread(self) -> None:
        with self._lock:
            # A forked child (an RQ work-horse) inherits the object but not the thread: start its own.
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._queue = queue.Queue()
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="run-events", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        # One event loop for this thread's whole life (not one per event, as async_to_sync would make). The
        # blocking get happens outside the loop: no executor thread that interpreter exit would wait for.
        loop = asyncio.new_event_loop()
        layer = get_channel_layer()
        pending = self._queue
        while True:
            event = pending.get()
            try:
                if layer is not None:
                    message = {"type": "run.event", "event": event.model_dump()}
                    loop.run_until_complete(layer.group_send(run_group(event.run_id), message))
            except Exception:
                # At-most-once by design: the page re-syncs from the database when it (re)connects.
                log.warning("could not send a live event for run %s", event.run_id, exc_info=True)
            finally:
                pending.task_done()


_sender = _Sender()


def flush_events(timeout_s: float = 5.0) -> None:
    _sender.flush(timeout_s)


def send_after_commit(event: RunEvent) -> None:
    """The channel layer is at-most-once and the page re-syncs from the database, so losing one is harmless;
    sending before commit is not (a browser would fetch a row that does not exist yet)."""
    transaction.on_commit(lambda: _sender.put(event))
