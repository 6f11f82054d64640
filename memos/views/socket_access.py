"""Access re-checks for run-page sockets, shared by the sockets of one process.

Before a socket sends an event it re-checks, at most once a ``RECHECK_S``, that its session still signs its
user in and that the user may still see the run (``memos.views.run_socket.RunConsumer.run_event``). Checked
one socket at a time that is about four queries per socket, and a process runs them one after another
(Channels' ``database_sync_to_async`` is thread-sensitive: one database thread per process). With rounds a
second apart every event paid the check for each of a hundred sockets in turn (issue #7: p95 372 ms). Here the
first socket that finds its check due starts one check of every due socket of its process on that run, in four
queries whatever their number, and the other sockets await that same result.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum
from importlib import import_module
from typing import Any
from uuid import UUID

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.contrib.auth.backends import BaseBackend, ModelBackend
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from memos.services.access import visible_run_pairs

# A socket sends events on the strength of a check at most this old (seconds): a run sends dozens of events
# and a busy page has many sockets, so access is not read again for every one.
RECHECK_S = 1.0


class Access(Enum):
    GRANTED = "granted"
    SIGNED_OUT = "signed out"  # the session no longer signs in the user who opened the socket
    NOT_VISIBLE = "not visible"  # the user is still signed in but may no longer see the run


@dataclass(frozen=True)
class SocketKey:
    """What a socket's access depends on: the session that opened it (None in a scope built without one, as
    in a test of the consumer alone), the user that session signed in at connect, and the run."""

    session_key: str | None
    user_id: int
    run_id: str


# A session's sign-in: the path of the auth backend it names (None for a scope without a session), a user id.
Claim = tuple[str | None, Any]


@dataclass(frozen=True)
class Checked:
    access: Access
    # time.monotonic() when the check began: what it read is at least this recent, so a socket counts its
    # RECHECK_S from here, not from when the answer came back.
    at: float


# --- the check itself, for many sockets at once (synchronous: it runs on the database thread)


def check_access(keys: Collection[SocketKey]) -> dict[SocketKey, Access]:
    """Each socket's access now, in four queries however many keys: the sessions, their users, the users'
    groups and the runs."""
    users = _signed_in_users(keys)
    visible = visible_run_pairs(users.values(), {key.run_id for key in keys})
    access = {}
    for key in keys:
        user = users.get(key)
        if user is None:
            access[key] = Access.SIGNED_OUT
        elif (user.pk, UUID(key.run_id)) in visible:
            access[key] = Access.GRANTED
        else:
            access[key] = Access.NOT_VISIBLE
    return access


def _session_data(session_keys: Collection[str]) -> dict[str, dict[str, Any]]:
    """The stored data of each session that still exists and has not expired."""
    if not session_keys:
        return {}
    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    if issubclass(store_class, DatabaseSessionStore):
        # The database engine (the one configured) and cached_db, whose database rows are the truth: what
        # DatabaseSessionStore.load reads for one key, an unexpired row decoded the same way, for all of them.
        rows = (
            store_class.get_model_class()
            .objects.filter(session_key__in=session_keys, expire_date__gt=timezone.now())
            .values_list("session_key", "session_data")
        )
        decoder = store_class()
        return {key: decoder.decode(data) for key, data in rows}
    # Another engine: one load per session, still all of them in this one trip to the database thread.
    return {key: data for key in session_keys if (data := store_class(key).load())}


def _signed_in_users(keys: Collection[SocketKey]) -> dict[SocketKey, AbstractBaseUser]:
    """For each key whose session still signs in the key's user, that user: what ``channels.auth.get_user``
    (the socket's check at connect) would find, with the users read in one query rather than one each.

    A session whose password hash no longer matches counts as signed out. Unlike get_user this does not
    flush it: the socket closes either way, and Django flushes it at that session's next request.
    """
    user_model = get_user_model()
    data = _session_data({key.session_key for key in keys if key.session_key is not None})
    claims: dict[SocketKey, Claim] = {}
    for key in keys:
        if key.session_key is None:
            # A scope built without a session (a test of the consumer alone) has only its user to go on.
            claims[key] = (None, key.user_id)
            continue
        session = data.get(key.session_key, {})
        try:
            user_id = user_model._meta.pk.to_python(session[SESSION_KEY])
            backend_path = session[BACKEND_SESSION_KEY]
        except (KeyError, ValidationError):
            continue
        if backend_path in settings.AUTHENTICATION_BACKENDS and user_id == key.user_id:
            claims[key] = (backend_path, user_id)

    users = _users_by_claim(set(claims.values()))
    signed_in = {}
    for key, claim in claims.items():
        user = users.get(claim)
        if user is None:
            continue
        if key.session_key is not None and hasattr(user, "get_session_auth_hash"):
            session_hash = data[key.session_key].get(HASH_SESSION_KEY)
            if not (session_hash and constant_time_compare(session_hash, user.get_session_auth_hash())):
                continue
        signed_in[key] = user
    return signed_in


def _users_by_claim(claims: Collection[Claim]) -> dict[Claim, AbstractBaseUser]:
    """The user each (backend, user id) claim names, as that backend's ``get_user`` returns it. ModelBackend's
    (the one the login page signs in with) reads one row and asks ``user_can_authenticate``: the rows of all
    of them are read in one query and asked the same. A backend with a get_user of its own is asked itself."""
    by_row: dict[str, ModelBackend] = {}
    by_itself: dict[str, BaseBackend] = {}
    for backend_path in {path for path, _ in claims if path is not None}:
        backend = load_backend(backend_path)
        if isinstance(backend, ModelBackend) and type(backend).get_user is ModelBackend.get_user:
            by_row[backend_path] = backend
        else:
            by_itself[backend_path] = backend

    rows = get_user_model()._default_manager.in_bulk(
        {uid for path, uid in claims if path is None or path in by_row}
    )
    users: dict[Claim, AbstractBaseUser] = {}
    for path, uid in claims:
        found: AbstractBaseUser | None
        if path is None:
            found = rows.get(uid)
        elif path in by_row:
            row = rows.get(uid)
            found = row if row is not None and by_row[path].user_can_authenticate(row) else None
        else:
            found = by_itself[path].get_user(uid)
        if found is not None:
            users[(path, uid)] = found
    return users


# --- the sockets of one process, sharing checks


class AccessChecker:
    """The run-page sockets of one process (one event loop) and their latest access checks.

    Sockets register while open (``watch``). When one finds its check due (``check``), it starts one batch for
    every registered socket on that run whose check is due too, not only those whose copy of the event has
    already arrived: the others' copies follow within milliseconds, and find their answer waiting. A socket
    whose key is in a batch still running awaits that batch rather than starting another. A check is shared
    by the sockets of one (session, user, run) while it is younger than RECHECK_S.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._watching: dict[str, dict[str, SocketKey]] = defaultdict(dict)  # run id: channel name: key
        self._checked: dict[SocketKey, Checked] = {}
        self._running: dict[SocketKey, asyncio.Task[dict[SocketKey, Checked]]] = {}

    def watch(self, channel_name: str, key: SocketKey, checked: Checked) -> None:
        """A socket opened after the check ``checked`` let it in."""
        self._watching[key.run_id][channel_name] = key
        self._remember(key, checked)

    def unwatch(self, channel_name: str, run_id: str) -> None:
        sockets = self._watching.get(run_id)
        if sockets is not None:
            sockets.pop(channel_name, None)
            if not sockets:
                del self._watching[run_id]

    async def check(self, key: SocketKey) -> Checked:
        """The socket's access as of a check begun less than RECHECK_S ago (this one's, or one it joins)."""
        known = self._checked.get(key)
        if known is not None and time.monotonic() - known.at < RECHECK_S:
            return known
        batch = self._running.get(key)
        if batch is None:
            batch = self._start(key)
        # Shielded: a socket that closes while it waits must not cancel the check the others wait on.
        return (await asyncio.shield(batch))[key]

    def _start(self, key: SocketKey) -> asyncio.Task[dict[SocketKey, Checked]]:
        now = time.monotonic()
        self._checked = {k: c for k, c in self._checked.items() if now - c.at < RECHECK_S}
        keys = {key} | {
            other
            for other in self._watching.get(key.run_id, {}).values()
            if other not in self._running and other not in self._checked
        }
        # A context of its own: the batch serves every socket, so it takes none of the first one's context
        # with it (asgiref picks the database thread from context variables).
        batch = self.loop.create_task(self._run(keys, now), context=contextvars.Context())
        batch.add_done_callback(_consume_error)
        for each in keys:
            self._running[each] = batch
        return batch

    async def _run(self, keys: set[SocketKey], started: float) -> dict[SocketKey, Checked]:
        try:
            found: dict[SocketKey, Access] = await database_sync_to_async(check_access)(keys)
            checked = {key: Checked(found[key], started) for key in keys}
            for key, each in checked.items():
                self._remember(key, each)
            return checked
        finally:
            # In the same step as the results are stored: no moment at which a socket finds neither.
            for key in keys:
                self._running.pop(key, None)

    def _remember(self, key: SocketKey, checked: Checked) -> None:
        # Keep the newest: an older GRANTED (a slow connect) must not hide a newer refusal.
        known = self._checked.get(key)
        if known is None or known.at <= checked.at:
            self._checked[key] = checked


def _consume_error(batch: asyncio.Task[dict[SocketKey, Checked]]) -> None:
    # The sockets waiting on a failed batch each get its error; if all of them closed meanwhile, this keeps
    # asyncio from also logging it as never retrieved.
    if not batch.cancelled():
        batch.exception()


class _PerLoop:
    checker: AccessChecker | None = None


def access_checker() -> AccessChecker:
    """This process's checker. One per event loop: a test runs each test in a loop of its own, and a task or
    future of one loop cannot be awaited from another."""
    loop = asyncio.get_running_loop()
    if _PerLoop.checker is None or _PerLoop.checker.loop is not loop:
        _PerLoop.checker = AccessChecker(loop)
    return _PerLoop.checker
