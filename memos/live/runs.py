"""WebSocket consumer for a run page: login and access are checked at connect and again before every event,
state is re-synced on connect, and the socket closes when the session that opened it logs out."""

from __future__ import annotations

import time
from importlib import import_module
from typing import Any

from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from memos.live.access import RECHECK_S, Access, Checked, SocketKey, access_checker
from memos.live.events import RunEvent, run_group, session_tag, user_group
from memos.models import Run
from memos.pipeline.cards import snapshot
from memos.services.access import visible_runs

__all__ = ["CLOSED_NOT_VISIBLE", "CLOSED_SIGNED_OUT", "RECHECK_S", "RunConsumer"]

# Close codes (4000-4999 are the application's). run.js does not retry after CLOSED_NOT_VISIBLE.
CLOSED_NOT_VISIBLE = 4404  # no such run, or not yours: the same answer, so trying ids teaches nothing
CLOSED_SIGNED_OUT = 4401  # the session that opened the socket logged out or ended


class RunConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    run_id: str
    user_id: int | None = None
    session_key: str | None = None
    key: SocketKey | None = None  # set once the socket is let in
    checked_at = float("-inf")  # when the check that last let it in began (connect, then once a RECHECK_S)

    async def connect(self) -> None:
        self.run_id = str(self.scope["url_route"]["kwargs"]["run_id"])
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSED_NOT_VISIBLE)
            return
        self.user_id = user.pk
        session = self.scope.get("session")
        self.session_key = session.session_key if session is not None else None
        # Join the user's group before checking: a logout after the check still reaches this socket, and one
        # before it is caught by the check, which reads the session afresh.
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        started = time.monotonic()
        run = await self._visible_run()
        if run is None:
            await self.close(code=CLOSED_NOT_VISIBLE)
            return
        self.key = SocketKey(session_key=self.session_key, user_id=self.user_id, run_id=self.run_id)
        self.checked_at = started
        # Join first, then read: an event sent meanwhile is delivered after the snapshot, in order, so the
        # page ends on the newest state. Reading first could lose a change made between read and join.
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        # The process's checker re-checks this socket together with the others on the run (run_event).
        access_checker().watch(self.channel_name, self.key, Checked(Access.GRANTED, started))
        await self.accept()
        for event in await self._snapshot(run):
            await self.send_json(event.model_dump())

    async def disconnect(self, code: int) -> None:
        if self.key is not None:
            access_checker().unwatch(self.channel_name, self.run_id)
        await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)
        if self.user_id is not None:
            await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)

    async def run_event(self, message: dict[str, Any]) -> None:
        # A session can end without a logout (expiry, a password change elsewhere, the admin deleting it or
        # taking a role away): nothing is sent to a socket whose session no longer shows it the run. Checked
        # at most once a RECHECK_S: a run sends dozens of events, and a busy page has many sockets. The check
        # is awaited before the send, so an event never goes out on the strength of a check older than that;
        # the sockets of this process on this run share one batched check (memos.live.access).
        if self.key is None:
            return  # never let in, so never in the run's group: nothing of the run is sent
        if time.monotonic() - self.checked_at >= RECHECK_S:
            checked = await access_checker().check(self.key)
            if checked.access is Access.SIGNED_OUT:
                await self.close(code=CLOSED_SIGNED_OUT)
                return
            if checked.access is Access.NOT_VISIBLE:
                await self.close(code=CLOSED_NOT_VISIBLE)
                return
            self.checked_at = checked.at
        await self.send_json(message["event"])

    async def session_ended(self, message: dict[str, Any]) -> None:
        """A logout of one of this user's sessions (memos.live.signals): close if it is the one this socket
        belongs to; the user's other browsers keep theirs."""
        if self.session_key and message.get("session") == session_tag(self.session_key):
            await self.close(code=CLOSED_SIGNED_OUT)

    async def _signed_in_user(self) -> Any:
        """The user this socket's session signs in now, read afresh from the session store (the scope's copy
        was read at connect), or None. A scope built without a session (a test of the consumer alone) has
        only its user to go on."""
        if self.session_key is None:
            user = self.scope.get("user")
        else:
            store = import_module(settings.SESSION_ENGINE).SessionStore(self.session_key)
            user = await get_user({"session": store})
        if user is None or not user.is_authenticated or user.pk != self.user_id:
            return None
        return user

    async def _visible_run(self) -> Run | None:
        user = await self._signed_in_user()
        if user is None:
            return None
        run: Run | None = await self._run_seen_by(user)
        return run

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _run_seen_by(self, user: Any) -> Run | None:
        run: Run | None = visible_runs(user).filter(pk=self.run_id).first()
        return run

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _snapshot(self, run: Run) -> list[RunEvent]:
        """The run's status and every step's card, rendered from the database: what a (re)connecting page
        needs to catch up with the events it missed while it was away."""
        return snapshot(Run.objects.select_related("brief__company").get(pk=run.pk))
