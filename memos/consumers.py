"""WebSocket consumer for a run page: login and access are checked at connect, state re-synced on connect."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.template.loader import render_to_string

from memos.events import run_group
from memos.services.access import visible_runs


class RunConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    run_id: str

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.run_id = str(self.scope["url_route"]["kwargs"]["run_id"])
        snapshot = await self._status_fragment(user)
        if snapshot is None:
            # Same answer for "no such run" and "not yours": nothing to learn from trying ids.
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        await self.accept()
        await self.send_json(
            {"kind": "status", "run_id": self.run_id, "target": "run-status", "html": snapshot}
        )

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)

    async def run_event(self, message: dict[str, Any]) -> None:
        await self.send_json(message["event"])

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _status_fragment(self, user: Any) -> str | None:
        if user is None or not user.is_authenticated:
            return None
        run = visible_runs(user).select_related("brief__company").filter(pk=self.run_id).first()
        if run is None:
            return None
        return render_to_string("memos/fragments/run_status.html", {"run": run})
