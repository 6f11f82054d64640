"""Signal receivers, connected in MemosConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from memos.live.events import send_session_ended


def close_sockets_on_logout(sender: object, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """A logout ends its session; the run-page sockets that session opened close with it.

    Django sends ``user_logged_out`` before it flushes the session, so the key read here is the one
    ending. Channels' own logout sends no request: there is no session key to name, and nothing to do.
    """
    if request is None or user is None or not user.is_authenticated:
        return
    session_key = request.session.session_key
    if session_key:
        send_session_ended(user_id=user.pk, session_key=session_key)
