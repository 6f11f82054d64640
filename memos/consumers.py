"""WebSocket consumer for a run page: login and access are checked at connect, state re-synced on connect."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from memos.events import RunEvent, run_group
from memos.models import Run
from memos.pipeline.cards import snapshot
from memos.services.access import visible_runs


class RunConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    run_id: str

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.run_id = str(self.scope["url_route"]["kwargs"]["run_id"])
        run = await self._visible_run(user)
        if run is None:
            # Same answer for "no such run" and "not yours": nothing to learn from trying ids.
            await self.close(code=4404)
            return
        # Join first, then read: an event sent meanwhile is delivered after the snapshot, in order, so the
        # page ends on the newest state. Reading first could lose a change made between read and join.
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        await self.accept()
        for event in await self._snapshot(run):
            await self.send_json(event.model_dump())

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)

    async def run_event(self, message: dict[str, Any]) -> None:
        await self.send_json(message["event"])

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _visible_run(self, user: Any) -> Run | None:
        if user is None or not user.is_authenticated:
            return None
        run: Run | None = visible_runs(user).filter(pk=self.run_id).first()
        return run

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _snapshot(self, run: Run) -> list[RunEvent]:
        """The run's status and every step's card, rendered from the database: what a (re)connecting page
        needs to catch up with the events it missed while it was away."""
        return snapshot(Run.objects.select_related("brief__company").get(pk=run.pk))
