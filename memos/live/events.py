"""Live-update events: typed payloads, one group-name function, sent only after the transaction commits."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Literal

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils.crypto import salted_hmac
from pydantic import BaseModel
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


def run_group(run_id: object) -> str:
    return f"run.{run_id}"


class RunEvent(BaseModel):
    """What the run page needs to redraw one part: which kind, which run, and the server-rendered fragment."""

    kind: Literal["status", "agent"]
    run_id: str
    target: str
    html: str
    # The fragment for a reader the workflow seals an evaluator's scores from ("" when it shows none): the
    # socket sends it as ``html`` to such a reader (memos.views.run_socket).
    sealed_html: str = ""


# An event, or a function that draws one (memos.pipeline.cards), called on the sender's thread.
Pending = RunEvent | Callable[[], RunEvent]


class _Sender:
    """Sends events from one background thread with its own event loop, in the order they were queued.

    A pipeline step must not wait on Redis for every status change (a few ms each, dozens per run), nor on
    drawing the card it sends (a template, a few ms more): it hands over the event, or a function that draws
    it from copies of its rows, and goes on, and this thread draws while the stage waits on a model.
    ``flush`` waits for the queue to drain: a stage calls it before its process may exit (an RQ work-horse
    ends with ``os._exit``, which would drop what is still queued).
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[Pending] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def put(self, event: Pending) -> None:
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
            queued = pending.get()
            try:
                event = queued if isinstance(queued, RunEvent) else queued()
                if layer is not None:
                    message = {"type": "run.event", "event": event.model_dump()}
                    loop.run_until_complete(layer.group_send(run_group(event.run_id), message))
            except Exception:
                # At-most-once by design: the page re-syncs from the database when it (re)connects.
                log.warning("could not send a live event", exc_info=True)
            finally:
                pending.task_done()


_sender = _Sender()


def flush_events(timeout_s: float = 5.0) -> None:
    _sender.flush(timeout_s)


def send_after_commit(event: Pending) -> None:
    """The channel layer is at-most-once and the page re-syncs from the database, so losing one is harmless;
    sending before commit is not (a browser would fetch a row that does not exist yet). A function is
    called on the sender's thread to draw the event: it must read nothing but what it was given."""
    transaction.on_commit(lambda: _sender.put(event))


def version_group(version_id: object) -> str:
    """The sockets on one version's page, in every process (memos.views.version_socket)."""
    return f"version.{version_id}"


class VersionEvent(BaseModel):
    """What a version page swaps in when its review changed, rendered for the one user of the socket it goes
    to (a member who has not voted gets the hidden tally): the status badge, the review panel and the history.
    """

    kind: Literal["review"]
    version_id: str
    status: str  # the version's status value, for the page's data-status
    badge: str
    review: str
    history: str


def send_version_changed(version_id: object) -> None:
    """Tell the sockets on a version's page that its review changed; each re-renders what its own user may
    see from the database. The message names the version and nothing else: no vote and no HTML passes
    through Redis, so nothing in it can show one person what only another may see.

    After commit, like every event, and sent at once (a vote is a person's click, rare next to a run's
    events): the other pages should show it within a second.
    """
    message = {"type": "version.changed", "version_id": str(version_id)}

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(version_group(version_id), message)
        except (RedisError, OSError):
            # At-most-once like every live event: the pages catch up when they reload or reconnect.
            log.warning(
                "could not tell the pages of version %s that its review changed", version_id, exc_info=True
            )

    transaction.on_commit(send)


def user_group(user_id: object) -> str:
    """Every socket of one user joins this group: the end of a session reaches the sockets it opened."""
    return f"user.{user_id}"


def session_tag(session_key: str) -> str:
    """Names a session in a channel message without carrying its key (the key signs a person in, and
    channel messages pass through Redis)."""
    return salted_hmac("memos.live.events.session_tag", session_key).hexdigest()


def send_session_ended(*, user_id: object, session_key: str) -> None:
    """Tell the user's sockets, in every process, that this session ended: the sockets it opened close.

    After commit, like every event. Sent at once rather than through the background sender: a logout is
    rare, and the socket should be closed by the time the logged-out page has loaded.
    """
    message = {"type": "session.ended", "session": session_tag(session_key)}

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(user_group(user_id), message)
        except (RedisError, OSError):
            # The logout itself has happened; an open socket of that session still closes at its next
            # event, when the consumer finds the session gone.
            log.warning("could not tell user %s's sockets that a session ended", user_id, exc_info=True)

    transaction.on_commit(send)
