"""A version page's socket (memos.live.sockets): its review panel, status and history follow the review.

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
from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.template.loader import render_to_string

from memos.live.events import VersionEvent, version_group
from memos.live.sockets import CLOSED_NOT_VISIBLE, CLOSED_SIGNED_OUT, DeskSocket
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


class VersionConsumer(DeskSocket):
    @property
    def version_id(self) -> str:
        return str(self.scope["url_route"]["kwargs"]["version_id"])

    def object_group(self) -> str:
        return version_group(self.version_id)

    async def sync(self) -> list[dict[str, Any]] | int:
        # The page was rendered before the socket opened: this re-syncs it (and does after every reconnect).
        current = await self._current()
        return current if isinstance(current, int) else [current.model_dump()]

    async def version_changed(self, message: dict[str, Any]) -> None:
        if not self.admitted:
            return
        current = await self._current()
        if isinstance(current, VersionEvent):
            await self.send_json(current.model_dump())
        else:  # signed out, a role taken away, a user deactivated: nothing more of the version is sent
            self.admitted = False
            await self.close(code=current)

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
