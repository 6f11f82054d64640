"""WebSocket consumer for a version's page: the review panel, the status and the history follow the review.

Login and access (``visible_versions``) are checked at connect and again for every change, from the session
store and the database, not the scope's copy: a vote is a person's click, rare enough to check each time.
The channel-layer message says only which version changed (memos.live.events.send_version_changed); each
socket then renders the fragments from the database as its own user may see them: while the vote is open,
the sealed tally (the turnout, the member's own vote in their form), and once it closed, the choices to those
who read them (memos.services.review.ballot).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.template.loader import render_to_string

from memos.live.events import VersionEvent, session_tag, user_group, version_group
from memos.services.access import visible_versions
from memos.views.versions import review_context

__all__ = [
    "CLOSED_NOT_VISIBLE",
    "CLOSED_SIGNED_OUT",
    "VersionConsumer",
    "render_event",
    "review_context",
    "signed_in_user",
]

# The run page's close codes (memos.live.runs), which version.js reads the same way.
CLOSED_NOT_VISIBLE = 4404  # no such version, or not yours to read: one answer, so trying ids teaches nothing
CLOSED_SIGNED_OUT = 4401  # the session that opened the socket logged out or ended

# A socket has no request to mint a CSRF token for: its forms carry this in the token's place, and the page
# puts in its own token before it shows them (version.js).
FILLED_IN_BY_THE_PAGE = "filled-in-by-the-page"


def render_event(user: User, version_id: int | str) -> VersionEvent | None:
    """The version's status, review panel and history as ``user`` may see them now; None if they may not
    see the version at all."""
    version = (
        visible_versions(user)
        .select_related("brief__company", "brief__owner", "run__created_by")
        .filter(pk=version_id)
        .first()
    )
    if version is None:
        return None
    context = review_context(user, version) | {"csrf_token": FILLED_IN_BY_THE_PAGE}
    return VersionEvent(
        kind="review",
        version_id=str(version.pk),
        status=version.status,
        badge=render_to_string("memos/versions/_status.html", context).strip(),
        review=render_to_string("memos/versions/_review.html", context).strip(),
        history=render_to_string("memos/versions/_history.html", context).strip(),
    )


def signed_in_user(session_key: str | None, user_id: int) -> User | None:
    """The user a session signs in now, read afresh from the session store and the database (Django's own
    check, the password-change hash included), if it is still ``user_id`` and active; else None. A scope
    built without a session (a test of the consumer alone) has only its user's id to go on."""
    if session_key is None:
        found: User | None = User.objects.filter(pk=user_id, is_active=True).first()
        return found
    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = auth.get_user(request)
    if not isinstance(user, User) or not user.is_active or user.pk != user_id:
        return None
    return user


class VersionConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    version_id = ""
    user_id: int | None = None
    session_key: str | None = None
    admitted = False  # let in: events of the version's group are rendered for it

    async def connect(self) -> None:
        self.version_id = str(self.scope["url_route"]["kwargs"]["version_id"])
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSED_NOT_VISIBLE)
            return
        self.user_id = user.pk
        session = self.scope.get("session")
        self.session_key = session.session_key if session is not None else None
        # The user's group first: a logout after the check below still reaches this socket (session_ended).
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        # Join, then render: a change committed meanwhile is in what is rendered now or sent after, never
        # lost. Until it is let in, the socket ignores the group's messages.
        await self.channel_layer.group_add(version_group(self.version_id), self.channel_name)
        current = await self._current()
        if not isinstance(current, VersionEvent):
            await self.channel_layer.group_discard(version_group(self.version_id), self.channel_name)
            await self.close(code=CLOSED_NOT_VISIBLE)  # signed out or not theirs: the same answer
            return
        self.admitted = True
        await self.accept()
        # The page was rendered before the socket opened: this re-syncs it (and does after every reconnect).
        await self.send_json(current.model_dump())

    async def disconnect(self, code: int) -> None:
        if self.version_id:
            await self.channel_layer.group_discard(version_group(self.version_id), self.channel_name)
        if self.user_id is not None:
            await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)

    async def version_changed(self, message: dict[str, Any]) -> None:
        if not self.admitted:
            return
        current = await self._current()
        if isinstance(current, VersionEvent):
            await self.send_json(current.model_dump())
        else:  # signed out, a role taken away, a user deactivated: nothing more of the version is sent
            self.admitted = False
            await self.close(code=current)

    async def session_ended(self, message: dict[str, Any]) -> None:
        """A logout of one of this user's sessions (memos.live.signals): close if it is this socket's."""
        if self.session_key and message.get("session") == session_tag(self.session_key):
            await self.close(code=CLOSED_SIGNED_OUT)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _current(self) -> VersionEvent | int:
        """What this socket's user may see of the version now, or the code to close with. One trip to the
        sync thread, which every page and socket of this process shares: a committee's sockets all render
        after one vote, and each should wait behind as little as possible."""
        if self.user_id is None:
            return CLOSED_SIGNED_OUT
        user = signed_in_user(self.session_key, self.user_id)
        if user is None:
            return CLOSED_SIGNED_OUT
        event = render_event(user, self.version_id)
        return CLOSED_NOT_VISIBLE if event is None else event
