"""One person holds at most SOCKETS_PER_USER live pages open at once (memos.live.sockets): the next one
is told why and not retried, a closed page gives its place back, and the bound is each person's own."""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import override_settings

from memos.live import sockets
from memos.live.sockets import CLOSED_TOO_MANY
from memos.models import Run
from memos.redis_client import redis_client
from memos.views.run_socket import RunConsumer
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(run: Run, user: Any) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(RunConsumer.as_asgi(), f"/ws/runs/{run.id}/")
    socket.scope["user"] = user
    socket.scope["url_route"] = {"kwargs": {"run_id": run.id}}
    return socket


async def opened(run: Run, user: User) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A socket and the first thing it received: the run's status, or its close."""
    socket = communicator(run, user)
    connected, _ = await socket.connect()
    assert connected  # accepted first, so a refused page learns why
    return socket, await socket.receive_output(timeout=5)


@pytest.fixture(autouse=True)
def _no_leases_left() -> None:
    for key in redis_client().scan_iter("desk:sockets:*"):
        redis_client().delete(key)


@override_settings(SOCKETS_PER_USER=2)
async def test_a_page_beyond_the_bound_is_told_so_and_a_closed_one_frees_its_place(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    first, sync = await opened(run, alice)
    second, _ = await opened(run, alice)
    assert sync["type"] == "websocket.send"

    third, refused = await opened(run, alice)
    assert (refused["type"], refused["code"]) == ("websocket.close", CLOSED_TOO_MANY)

    await first.disconnect()
    again, sync_again = await opened(run, alice)
    assert sync_again["type"] == "websocket.send" and "Queued" in sync_again["text"]
    for socket in (second, third, again):
        await socket.disconnect()


@override_settings(SOCKETS_PER_USER=1)
async def test_the_bound_is_each_persons_own(alice: User, admin_user: User) -> None:
    run = await sync_to_async(run_for)(alice)
    mine, _ = await opened(run, alice)
    theirs, sync = await opened(run, admin_user)
    assert sync["type"] == "websocket.send"  # alice's page does not count against the admin's
    await mine.disconnect()
    await theirs.disconnect()


@override_settings(SOCKETS_PER_USER=1)
async def test_a_lease_of_a_process_that_died_expires(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    """A web process killed with its sockets open never drops their leases: they lapse after LEASE_S."""
    run = await sync_to_async(run_for)(alice)
    assert await sync_to_async(sockets.take_lease)(alice.pk, "a-socket-of-a-dead-process")
    refused_socket, refused = await opened(run, alice)
    assert refused["code"] == CLOSED_TOO_MANY
    await refused_socket.disconnect()

    now = time.time()
    monkeypatch.setattr(sockets, "clock", lambda: now + sockets.LEASE_S + 1)
    socket, sync = await opened(run, alice)
    assert sync["type"] == "websocket.send"
    await socket.disconnect()
