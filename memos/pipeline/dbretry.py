"""Riding out a lost database connection (PostgreSQL restarted, a failover, a dropped socket).

A stage may be in the middle of a minutes-long LLM call when the database goes away; the answer it then
receives has been paid for and must not be lost. Writes that are safe to repeat go through
``retry_on_lost_connection``: on a connection error it drops the broken connection, waits and tries again,
until ``RUN_DB_OUTAGE_S`` has passed. Inside a transaction nothing is retried (the transaction is gone with
the connection): the outermost caller owns the retry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

log = logging.getLogger(__name__)

T = TypeVar("T")
FIRST_WAIT_S = 0.2
MAX_WAIT_S = 5.0


def retry_on_lost_connection(action: Callable[[], T], *, what: str) -> T:
    if connection.in_atomic_block:
        return action()
    deadline = time.monotonic() + float(settings.RUN_DB_OUTAGE_S)
    wait = FIRST_WAIT_S
    while True:
        try:
            return action()
        except (OperationalError, InterfaceError) as exc:
            # The last wait is cut short so that the last try falls at the deadline: giving up as soon as
            # the next full wait would pass it gave up to MAX_WAIT_S early (4.4 s of 6 in the test).
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            pause = min(wait, left)
            log.warning("database unavailable while %s (%s); retrying in %.1f s", what, exc, pause)
            connection.close()  # a broken connection is never reused; the next query opens a new one
            time.sleep(pause)
            wait = min(MAX_WAIT_S, wait * 2)
