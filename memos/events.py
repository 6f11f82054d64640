"""Live-update events: typed payloads, one group-name function, sent only after the transaction commits."""

from __future__ import annotations

from typing import Literal

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from pydantic import BaseModel


def run_group(run_id: object) -> str:
    return f"run.{run_id}"


class RunEvent(BaseModel):
    """What the run page needs to redraw one part: which kind, which run, and the server-rendered fragment."""

    kind: Literal["status", "agent", "document"]
    run_id: str
    target: str
    html: str


def _send_now(event: RunEvent) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(
        run_group(event.run_id), {"type": "run.event", "event": event.model_dump()}
    )


def send_after_commit(event: RunEvent) -> None:
    """The channel layer is at-most-once and the page re-syncs from the database, so losing one is harmless;
    sending before commit is not (a browser would fetch a row that does not exist yet)."""
    transaction.on_commit(lambda: _send_now(event))
