"""A per-process bound on renders (WeasyPrint, python-pptx, pdftoppm) done for a web request.

A render takes a core for up to a second or two. Unbounded, fifty readers asking at once for PDFs that are
not stored (a version frozen before its files were kept) or for a run's slide thumbnails would put fifty
renders on two cores, and every page of the desk would wait behind them; each waiting request would also
hold one of its process's few pooled database connections, so pages that render nothing would wait for a
connection too. So a request renders only in one of ``RENDERS_PER_PROCESS`` slots, and gives its database
connection back before it waits for a slot and before it renders: what it reads afterwards takes a
connection again. One that waits longer than ``RENDER_WAIT_SECONDS`` is refused with ``RenderBusy``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from django.conf import settings
from django.db import connection


class RenderBusy(RuntimeError):
    """Every render slot of this process stayed taken for as long as a request waits."""


@cache
def _slots(size: int) -> threading.BoundedSemaphore:
    # Per size, so a test (or a settings change) that asks for another size gets a semaphore of that size.
    return threading.BoundedSemaphore(size)


def release_connection() -> None:
    """Give this thread's database connection back (to the pool, in the web server) before a long wait. Not
    inside a transaction, whose connection must stay (tests, or a caller's atomic block)."""
    if not connection.in_atomic_block:
        connection.close()


@contextmanager
def render_slot() -> Iterator[None]:
    """Run the body in one of this process's render slots, holding no database connection while it waits."""
    release_connection()
    slots = _slots(int(settings.RENDERS_PER_PROCESS))
    if not slots.acquire(timeout=float(settings.RENDER_WAIT_SECONDS)):
        raise RenderBusy(
            f"every render slot stayed busy for {settings.RENDER_WAIT_SECONDS} s; try again in a moment"
        )
    try:
        yield
    finally:
        slots.release()
