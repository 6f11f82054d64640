"""The run page's socket (memos.live.sockets): the run's status and every step's card on (re)connect, then
each change as the pipeline sends it, re-checking before it sends that the session still signs its user in
and that the user may still see the run (at most once a ``RECHECK_S``, one batched check for the sockets of
this process on the run: memos.views.socket_access)."""

from __future__ import annotations

import time
from typing import Any

from channels.db import database_sync_to_async

from memos.live.events import run_group
from memos.live.sockets import CLOSED_NOT_VISIBLE, CLOSED_SIGNED_OUT, DeskSocket
from memos.pipeline.cards import snapshot
from memos.pipeline.registry import workflow_for
from memos.services.access import visible_runs
from memos.services.surfaces import surface_of
from memos.views.socket_access import RECHECK_S, Access, Checked, SocketKey, access_checker
from memos.views.version_socket import signed_in_user

__all__ = ["CLOSED_NOT_VISIBLE", "CLOSED_SIGNED_OUT", "RECHECK_S", "RunConsumer"]


class RunConsumer(DeskSocket):
    key: SocketKey | None = None  # set once the socket is let in
    sealed = False  # the reader may not see the evaluator's scores yet: sent each event's sealed fragment
    checked_at = float("-inf")  # when the check that last let it in began (connect, then once a RECHECK_S)

    @property
    def run_id(self) -> str:
        return str(self.scope["url_route"]["kwargs"]["run_id"])

    def object_group(self) -> str:
        return run_group(self.run_id)

    async def sync(self) -> list[dict[str, Any]] | int:
        started = time.monotonic()
        events: list[dict[str, Any]] | int = await self._visible_snapshot()
        if isinstance(events, int):
            return events
        assert self.user_id is not None
        self.key = SocketKey(session_key=self.session_key, user_id=self.user_id, run_id=self.run_id)
        self.checked_at = started
        # The process's checker re-checks this socket together with the others on the run (run_event).
        access_checker().watch(self.channel_name, self.key, Checked(Access.GRANTED, started))
        return events

    async def disconnect(self, code: int) -> None:
        if self.key is not None:
            access_checker().unwatch(self.channel_name, self.run_id)
        await super().disconnect(code)

    async def run_event(self, message: dict[str, Any]) -> None:
        # A session can end without a logout (expiry, a password change elsewhere, the admin deleting it or
        # taking a role away): nothing is sent to a socket whose session no longer shows it the run. The
        # check is awaited before the send, so an event never goes out on the strength of a check older
        # than RECHECK_S.
        if not self.admitted or self.key is None:
            return  # never let in: nothing of the run is sent
        if time.monotonic() - self.checked_at >= RECHECK_S:
            checked = await access_checker().check(self.key)
            if checked.access is Access.SIGNED_OUT:
                await self.close(code=CLOSED_SIGNED_OUT)
                return
            if checked.access is Access.NOT_VISIBLE:
                await self.close(code=CLOSED_NOT_VISIBLE)
                return
            self.checked_at = checked.at
        await self.send_json(shown(message["event"], sealed=self.sealed))

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _visible_snapshot(self) -> list[dict[str, Any]] | int:
        """The run's status and every step's card, rendered from the database as they are now (what a
        (re)connecting page needs to catch up with the events it missed), or the code to close with."""
        if self.user_id is None:
            return CLOSED_SIGNED_OUT
        user = signed_in_user(self.session_key, self.user_id)
        if user is None:
            return CLOSED_NOT_VISIBLE  # signed out or not theirs: one answer
        run = visible_runs(user).select_related("brief__company").filter(pk=self.run_id).first()
        if run is None:
            return CLOSED_NOT_VISIBLE
        pages = surface_of(workflow_for(run.workflow)).steps
        self.sealed = bool(pages.sealed(user, run)) if pages.sealed is not None else False
        return [shown(event.model_dump(), sealed=self.sealed) for event in snapshot(run)]


def shown(event: dict[str, Any], *, sealed: bool) -> dict[str, Any]:
    """The event as this reader gets it: where they are sealed and a sealed fragment was drawn, it alone (the
    page draws ``html``; the sealed fragment shows less than the other, so anyone may have it)."""
    if sealed and event.get("sealed_html"):
        return {**event, "html": event["sealed_html"]}
    return event
