"""The run page's WebSocket: login and access are checked at connect; state is re-synced on connect."""

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User

from memos.consumers import RunConsumer
from memos.events import RunEvent, send_after_commit
from memos.models import Run
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(run: Run, user: Any) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(RunConsumer.as_asgi(), f"/ws/runs/{run.id}/")
    socket.scope["user"] = user
    socket.scope["url_route"] = {"kwargs": {"run_id": run.id}}
    return socket


async def test_the_owner_connects_and_gets_the_current_status(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = communicator(run, alice)
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_json_from(timeout=5)
    assert first["kind"] == "status"
    assert "Queued" in first["html"]
    await socket.disconnect()


@pytest.mark.parametrize("who", ["outsider", "anonymous"])
async def test_anyone_else_is_refused_without_learning_anything(alice: User, charlie: User, who: str) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = communicator(run, charlie if who == "outsider" else AnonymousUser())
    connected, code = await socket.connect()
    assert not connected
    assert code == 4404


async def test_an_event_sent_to_the_run_group_reaches_the_page(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = communicator(run, alice)
    await socket.connect()
    await socket.receive_json_from(timeout=5)
    event = RunEvent(kind="agent", run_id=str(run.id), target="agent-fundamentals", html="<li>done</li>")
    await sync_to_async(send_after_commit)(event)  # outside a transaction: sent at once, in the background
    assert await socket.receive_json_from(timeout=5) == event.model_dump()
    await socket.disconnect()
