"""The run page's socket through the whole ASGI application, as a browser meets it: the Origin check, the
session cookie, access to the run, and the socket closing when its session logs out."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.utils import timezone

from agency.asgi import application
from memos.live.events import RunEvent, send_after_commit
from memos.models import Run
from memos.services.access import visible_runs
from memos.services.accounts import Roles, ensure_groups
from memos.views.run_socket import CLOSED_NOT_VISIBLE, CLOSED_SIGNED_OUT, RECHECK_S
from memos.views.socket_access import Access, SocketKey, check_access
from tests.memos.factories import company, run_for
from tests.memos.socket_support import refused

pytestmark = pytest.mark.django_db(transaction=True)

SITE = b"http://127.0.0.1:8000"
ELSEWHERE = b"https://attacker.example"


def log_in(username: str) -> Client:
    """A browser signed in through the real login page (so with a real session row and cookie)."""
    client = Client()
    page = client.post("/accounts/login/", {"username": username, "password": f"{username}-secret-pass"})
    assert page.status_code == 302, page.content
    return client


def socket_to(
    run: Run, client: Client | None = None, *, origin: bytes | None = SITE
) -> WebsocketCommunicator:
    """A socket to the run's page from a browser: its Origin header, and its session cookie if signed in."""
    headers = [(b"host", b"127.0.0.1:8000")]
    if origin is not None:
        headers.append((b"origin", origin))
    if client is not None:
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode()))
    return WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)


async def connected(socket: WebsocketCommunicator) -> list[dict[str, Any]]:
    """Connect, and read the status snapshot the consumer sends first."""
    accepted, code = await socket.connect(timeout=5)
    assert accepted, code
    snapshot = [await socket.receive_json_from(timeout=5)]
    while not await socket.receive_nothing(timeout=0.1):
        snapshot.append(await socket.receive_json_from(timeout=5))
    return snapshot


async def closed_within(socket: WebsocketCommunicator, seconds: float) -> int:
    """The close code the server sends within ``seconds``; fails if it sends anything else or nothing."""
    output = await socket.receive_output(timeout=seconds)
    assert output["type"] == "websocket.close", output
    code: int = output["code"]
    return code


def analyst(username: str) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-secret-pass")
    user.groups.add(ensure_groups()[Roles.ANALYST])
    return user


def event_for(run: Run) -> RunEvent:
    return RunEvent(kind="agent", run_id=str(run.pk), target="agent-fundamentals", html="<li>done</li>")


async def test_the_logout_reaches_sockets_through_redis_as_it_would_from_another_process() -> None:
    assert isinstance(get_channel_layer(), RedisChannelLayer)


async def test_a_socket_opened_from_another_site_is_refused(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    client = await sync_to_async(log_in)("alice")
    accepted, _ = await refused(socket_to(run, client, origin=ELSEWHERE))
    assert not accepted


async def test_a_socket_without_an_origin_is_refused(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    client = await sync_to_async(log_in)("alice")
    accepted, _ = await refused(socket_to(run, client, origin=None))
    assert not accepted


async def test_a_socket_without_a_session_is_refused(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    accepted, code = await refused(socket_to(run))
    assert (accepted, code) == (False, CLOSED_NOT_VISIBLE)


async def test_the_owner_connects_and_receives_the_runs_status(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = socket_to(run, await sync_to_async(log_in)("alice"))
    snapshot = await connected(socket)
    assert snapshot[0]["kind"] == "status" and "Queued" in snapshot[0]["html"]
    await socket.disconnect()


async def test_another_analysts_socket_to_the_run_is_refused_as_if_it_did_not_exist(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    await sync_to_async(analyst)("dave")
    accepted, code = await refused(socket_to(run, await sync_to_async(log_in)("dave")))
    assert (accepted, code) == (False, CLOSED_NOT_VISIBLE)


async def test_an_outsiders_socket_is_refused(alice: User, charlie: User) -> None:
    run = await sync_to_async(run_for)(alice)
    accepted, code = await refused(socket_to(run, await sync_to_async(log_in)("charlie")))
    assert (accepted, code) == (False, CLOSED_NOT_VISIBLE)


async def test_a_committee_member_connects_and_follows_the_run(alice: User, bob: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = socket_to(run, await sync_to_async(log_in)("bob"))
    assert (await connected(socket))[0]["kind"] == "status"
    event = event_for(run)
    await sync_to_async(send_after_commit)(event)
    assert await socket.receive_json_from(timeout=5) == event.model_dump()
    await socket.disconnect()


async def test_a_logout_closes_the_open_socket_within_two_seconds(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    browser = await sync_to_async(log_in)("alice")
    socket = socket_to(run, browser)
    await connected(socket)

    logged_out = await sync_to_async(browser.post)("/accounts/logout/")
    started = time.monotonic()

    assert logged_out.status_code == 302
    assert await closed_within(socket, 2.0) == CLOSED_SIGNED_OUT
    assert time.monotonic() - started < 2.0
    await socket.disconnect()


async def test_a_logout_in_one_browser_leaves_the_users_other_browser_connected(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    laptop, phone = await sync_to_async(log_in)("alice"), await sync_to_async(log_in)("alice")
    on_laptop, on_phone = socket_to(run, laptop), socket_to(run, phone)
    await connected(on_laptop)
    await connected(on_phone)

    await sync_to_async(laptop.post)("/accounts/logout/")

    assert await closed_within(on_laptop, 2.0) == CLOSED_SIGNED_OUT
    await on_laptop.disconnect()
    event = event_for(run)
    await sync_to_async(send_after_commit)(event)
    assert await on_phone.receive_json_from(timeout=5) == event.model_dump()
    await on_phone.disconnect()


async def test_a_socket_whose_session_ended_without_a_logout_gets_no_further_event(alice: User) -> None:
    run = await sync_to_async(run_for)(alice)
    browser = await sync_to_async(log_in)("alice")
    socket = socket_to(run, browser)
    await connected(socket)
    # The session expired, or an admin removed it: no logout signal, so the next event finds it gone.
    session_key = browser.cookies[settings.SESSION_COOKIE_NAME].value
    await sync_to_async(Session.objects.filter(session_key=session_key).delete)()
    await asyncio.sleep(RECHECK_S)  # the consumer re-checks access at most once a second

    await sync_to_async(send_after_commit)(event_for(run))

    assert await closed_within(socket, 5.0) == CLOSED_SIGNED_OUT
    await socket.disconnect()


async def test_a_member_who_leaves_the_committee_gets_no_further_event(alice: User, bob: User) -> None:
    run = await sync_to_async(run_for)(alice)
    socket = socket_to(run, await sync_to_async(log_in)("bob"))
    await connected(socket)
    await sync_to_async(bob.groups.clear)()
    await asyncio.sleep(RECHECK_S)  # the consumer re-checks access at most once a second

    await sync_to_async(send_after_commit)(event_for(run))

    assert await closed_within(socket, 5.0) == CLOSED_NOT_VISIBLE
    await socket.disconnect()


def committee_member(username: str) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-secret-pass")
    user.groups.add(ensure_groups()[Roles.COMMITTEE])
    return user


class QueryCount:
    """Counts the queries run on the database thread Channels uses for consumers (database_sync_to_async
    runs every call of this process there, one at a time): the sockets' access re-checks."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.queries.append(sql)
        return execute(sql, params, many, context)

    async def start(self) -> None:
        await sync_to_async(lambda: connection.execute_wrappers.append(self))()

    async def stop(self) -> None:
        await sync_to_async(lambda: connection.execute_wrappers.remove(self))()


@pytest.mark.parametrize("members", [2, 6])
async def test_one_event_rechecks_the_sockets_of_many_users_in_the_same_few_queries(
    alice: User, members: int
) -> None:
    run = await sync_to_async(run_for)(alice)
    names = [f"member{n}" for n in range(members)]
    users = [await sync_to_async(committee_member)(name) for name in names]
    sockets = [socket_to(run, await sync_to_async(log_in)(name)) for name in names]
    for socket in sockets:
        await connected(socket)
    await sync_to_async(users[0].groups.clear)()  # the first member leaves the committee
    await asyncio.sleep(RECHECK_S)  # every socket's check is due
    count = QueryCount()
    await count.start()
    try:
        event = event_for(run)
        await sync_to_async(send_after_commit)(event)

        assert await closed_within(sockets[0], 5.0) == CLOSED_NOT_VISIBLE
        for socket in sockets[1:]:
            assert await socket.receive_json_from(timeout=5) == event.model_dump()
    finally:
        await count.stop()
    # One batch for all of them: the sessions, their users, the users' groups, the run. Not four a socket.
    assert len(count.queries) == 4, count.queries
    for socket in sockets:
        await socket.disconnect()


@pytest.mark.parametrize("ended", ["expired", "password changed elsewhere"])
async def test_a_socket_whose_session_stopped_signing_in_gets_no_further_event(
    alice: User, ended: str
) -> None:
    run = await sync_to_async(run_for)(alice)
    browser = await sync_to_async(log_in)("alice")
    socket = socket_to(run, browser)
    await connected(socket)
    if ended == "expired":
        session_key = browser.cookies[settings.SESSION_COOKIE_NAME].value
        past = timezone.now() - timedelta(seconds=1)
        await sync_to_async(Session.objects.filter(session_key=session_key).update)(expire_date=past)
    else:
        alice.set_password("a-new-secret-pass")
        await sync_to_async(alice.save)()
    await asyncio.sleep(RECHECK_S)

    await sync_to_async(send_after_commit)(event_for(run))

    assert await closed_within(socket, 5.0) == CLOSED_SIGNED_OUT
    await socket.disconnect()


def test_the_batched_check_shows_each_user_exactly_the_runs_visible_runs_shows(alice: User) -> None:
    """memos.views.socket_access reads visible_runs' rule for many users at once: the two agree for every
    role, for a run's owner, its creator and everyone else, for an inactive user and a superuser."""
    groups = ensure_groups()
    cast = []
    for role in [*Roles.ALL, None]:
        for status in ("owner", "creator", "other", "inactive"):
            user = User.objects.create_user(username=f"{role}-{status}", is_active=status != "inactive")
            if role is not None:
                user.groups.add(groups[role])
            cast.append((user, status))
    cast.append((User.objects.create_superuser(username="root", password="root-secret-pass"), "other"))
    apple = company()
    runs = []
    for user, status in cast:
        if status == "owner":
            runs.append(run_for(user, apple))  # owns the brief and started the run
        elif status == "creator":
            owned = run_for(alice, apple)
            Run.objects.filter(pk=owned.pk).update(created_by=user)  # started a run on alice's brief
            runs.append(owned)
    users = [user for user, _ in cast]
    keys = {SocketKey(session_key=None, user_id=u.pk, run_id=str(r.pk)): (u, r) for u in users for r in runs}

    found = check_access(keys)

    expected = {
        key: Access.GRANTED if visible_runs(user).filter(pk=run.pk).exists() else Access.NOT_VISIBLE
        for key, (user, run) in keys.items()
    }
    assert found == expected
    assert Access.GRANTED in found.values() and Access.NOT_VISIBLE in found.values()
