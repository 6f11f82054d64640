"""The run page's WebSocket: login and access are checked at connect; state is re-synced on connect."""

import asyncio
import threading
from collections.abc import Collection
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User

from memos.live.events import RunEvent, send_after_commit
from memos.models import AgentStep, Run
from memos.pipeline.cards import publish_step
from memos.views import socket_access
from memos.views.run_socket import CLOSED_NOT_VISIBLE, RECHECK_S, RunConsumer
from memos.views.socket_access import Access, SocketKey
from tests.memos.factories import run_for
from tests.memos.socket_support import refused

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
    assert await refused(socket) == (False, 4404)


async def test_an_event_sent_to_the_run_group_reaches_the_page(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = communicator(run, alice)
    await socket.connect()
    await socket.receive_json_from(timeout=5)
    event = RunEvent(kind="agent", run_id=str(run.id), target="agent-fundamentals", html="<li>done</li>")
    await sync_to_async(send_after_commit)(event)  # outside a transaction: sent at once, in the background
    assert await socket.receive_json_from(timeout=5) == event.model_dump()
    await socket.disconnect()


async def test_a_user_deactivated_since_connect_gets_no_further_event(alice: User) -> None:
    """The re-check reads the user afresh, not the copy the scope was built with."""
    run = await sync_to_async(run_for)(alice)
    socket = communicator(run, alice)
    await socket.connect()
    await socket.receive_json_from(timeout=5)
    await sync_to_async(User.objects.filter(pk=alice.pk).update)(is_active=False)
    await asyncio.sleep(RECHECK_S)  # the consumer re-checks access at most once a second

    event = RunEvent(kind="agent", run_id=str(run.id), target="agent-fundamentals", html="<li>done</li>")
    await sync_to_async(send_after_commit)(event)

    output = await socket.receive_output(timeout=5)
    assert (output["type"], output["code"]) == ("websocket.close", CLOSED_NOT_VISIBLE)
    await socket.disconnect()


async def test_sockets_of_one_user_on_one_run_share_one_recheck(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tabs of one page: one event, and both get it after a single check of the two."""
    run = await sync_to_async(run_for)(alice)
    first, second = communicator(run, alice), communicator(run, alice)
    for socket in (first, second):
        await socket.connect()
        await socket.receive_json_from(timeout=5)
    await asyncio.sleep(RECHECK_S)
    batches: list[int] = []
    real_check = socket_access.check_access

    def counted(keys: Collection[SocketKey]) -> dict[SocketKey, Access]:
        batches.append(len(keys))
        return real_check(keys)

    monkeypatch.setattr(socket_access, "check_access", counted)
    event = RunEvent(kind="agent", run_id=str(run.id), target="agent-fundamentals", html="<li>done</li>")
    await sync_to_async(send_after_commit)(event)

    assert await first.receive_json_from(timeout=5) == event.model_dump()
    assert await second.receive_json_from(timeout=5) == event.model_dump()
    assert batches == [1]  # one batch, of the one (session, user, run) the two sockets share
    await first.disconnect()
    await second.disconnect()


async def test_a_step_card_shows_the_step_as_it_was_when_published(alice: User) -> None:
    """Cards are drawn on the events thread, after the stage has gone on: from a copy, not the live row."""
    run = await sync_to_async(run_for)(alice)
    step = await sync_to_async(AgentStep.objects.create)(
        run=run, stage="specialists", key="fundamentals", kind="specialist", title="Fundamentals"
    )
    step.run = run
    socket = communicator(run, alice)
    await socket.connect()
    await socket.receive_json_from(timeout=5)  # the status line
    await socket.receive_json_from(timeout=5)  # and the step's card, as it is now
    hold_drawing = threading.Event()

    def blocked() -> RunEvent:
        hold_drawing.wait(5)  # the events thread is busy until the step has changed
        return RunEvent(kind="status", run_id=str(run.id), target="run-status", html="<div>busy</div>")

    await sync_to_async(send_after_commit)(blocked)
    step.status = AgentStep.Status.RUNNING
    await sync_to_async(publish_step)(step)
    step.status, step.summary = AgentStep.Status.DONE, "a later summary"
    hold_drawing.set()

    assert (await socket.receive_json_from(timeout=5))["html"] == "<div>busy</div>"
    card = await socket.receive_json_from(timeout=5)
    assert card["target"] == f"step-{step.pk}"
    assert 'data-status="running"' in card["html"]
    assert "a later summary" not in card["html"]
    await socket.disconnect()
