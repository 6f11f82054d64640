"""What every page socket of the desk shares (the run page's, memos.views.run_socket; a version page's,
memos.views.version_socket): who may open one, how it joins its groups and re-syncs its page, when it closes,
and how many one person may hold open.

A socket is let in only for a signed-in user who may see its object, after it has joined both its user's group
(a logout of its session reaches it: ``session_ended``) and its object's group (an event sent between the
access check and the join is not lost: the page is re-synced after the join). Until it is let in, it ignores
its object's events. Each user holds at most ``SOCKETS_PER_USER`` sockets at once, across every web process:
a lease per socket in Redis, renewed while the socket lives and expiring with a process that died, so one
person's hundred tabs (or a script) cannot take the server's sockets from everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from redis.exceptions import RedisError

from memos.live.events import session_tag, user_group
from memos.redis_client import redis_client

# Close codes (4000-4999 are the application's); static/js/live.js does not reconnect after these.
CLOSED_NOT_VISIBLE = 4404  # no such object, or not yours: the same answer, so trying ids teaches nothing
CLOSED_SIGNED_OUT = 4401  # the session that opened the socket logged out or ended
CLOSED_TOO_MANY = 4429  # this user holds SOCKETS_PER_USER sockets already

LEASE_S = 90  # a socket's lease; renewed every third of it while the socket lives
clock = time.time  # the leases' clock (a test moves it on)

# Takes a lease for one socket if the user holds fewer than the limit (expired leases dropped first); a socket
# that holds one already just renews it. Atomic in Redis: two connects at once cannot both take the last one.
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def _leases_key(user_id: int) -> str:
    return f"desk:sockets:{user_id}"


def take_lease(user_id: int, socket: str) -> bool:
    """A lease for ``socket`` of ``user_id``, or False when the user holds the most allowed. Redis down: the
    socket is let in (the bound protects the server; it must not lock everyone out with it)."""
    now = clock()
    try:
        taken = redis_client().eval(
            _TAKE, 1, _leases_key(user_id), now, now + LEASE_S, settings.SOCKETS_PER_USER, socket, LEASE_S * 2
        )
    except RedisError:
        return True
    return bool(taken)


def drop_lease(user_id: int, socket: str) -> None:
    with contextlib.suppress(RedisError):
        redis_client().zrem(_leases_key(user_id), socket)


class DeskSocket(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    """A page's socket. A subclass names its object's group and says what its user may see of it now."""

    user_id: int | None = None
    session_key: str | None = None
    admitted = False  # let in: its object's events are for it
    _leased = False
    _renewing: asyncio.Task[None] | None = None

    def object_group(self) -> str:
        """The channel-layer group of the object the page shows (memos.live.events)."""
        raise NotImplementedError

    async def sync(self) -> list[dict[str, Any]] | int:
        """The events that bring the page up to date now, or the code to close with (the user may not see
        the object, or is signed out). Called at connect and on every reconnect."""
        raise NotImplementedError

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSED_NOT_VISIBLE)
            return
        self.user_id = user.pk
        session = self.scope.get("session")
        self.session_key = session.session_key if session is not None else None
        # The user's group first: a logout after the check below still reaches this socket (session_ended).
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        # Join, then read: a change committed meanwhile is in what is read now or sent after, never lost.
        await self.channel_layer.group_add(self.object_group(), self.channel_name)
        current = await self.sync()
        if isinstance(current, int):
            await self.channel_layer.group_discard(self.object_group(), self.channel_name)
            await self.close(code=current)
            return
        self._leased = await sync_to_async(take_lease, thread_sensitive=False)(
            self.user_id, self.channel_name
        )
        await self.accept()
        if not self._leased:
            # Accepted first, so the page hears why and does not reconnect (a refusal before accepting
            # reaches a browser as a bare 403).
            await self.channel_layer.group_discard(self.object_group(), self.channel_name)
            await self.close(code=CLOSED_TOO_MANY)
            return
        self._renewing = asyncio.create_task(self._renew())
        self.admitted = True
        for event in current:
            await self.send_json(event)

    async def disconnect(self, code: int) -> None:
        if self._renewing is not None:
            self._renewing.cancel()
        if self._leased and self.user_id is not None:
            await sync_to_async(drop_lease, thread_sensitive=False)(self.user_id, self.channel_name)
        await self.channel_layer.group_discard(self.object_group(), self.channel_name)
        if self.user_id is not None:
            await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)

    async def session_ended(self, message: dict[str, Any]) -> None:
        """A logout of one of this user's sessions (memos.live.signals): close if it is this socket's; the
        user's other browsers keep theirs."""
        if self.session_key and message.get("session") == session_tag(self.session_key):
            await self.close(code=CLOSED_SIGNED_OUT)

    async def _renew(self) -> None:
        assert self.user_id is not None
        while True:
            await asyncio.sleep(LEASE_S / 3)
            await sync_to_async(take_lease, thread_sensitive=False)(self.user_id, self.channel_name)
