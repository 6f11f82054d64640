"""A bounded, thread-safe store of what this process built, by a key naming its content (the newest kept)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from threading import Lock
from typing import Generic, TypeVar

T = TypeVar("T")


class KeptInProcess(Generic[T]):
    """What this process built from some content, by that content's key, the newest ``kept``: the same
    content builds the same value, so what was built once serves every later ask (a frozen version's page,
    a deck's PPTX bytes, a PDF page's text). Thread-safe: web processes and the pipeline build in threads."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._built: OrderedDict[str, T] = OrderedDict()
        self._lock = Lock()

    def find(self, key: str) -> T | None:
        """The value kept for ``key``, if any (building nothing)."""
        hit = self._hit(key)
        return hit[0] if hit is not None else None

    def get(self, key: str, build: Callable[[], T]) -> T:
        """The value kept for ``key``, or ``build()``'s, kept (an empty key is never kept: content without
        a name, such as a version not frozen yet, is built each time)."""
        hit = self._hit(key)
        if hit is not None:
            return hit[0]
        value = build()
        if key:
            with self._lock:
                self._built[key] = value
                while len(self._built) > self._kept:
                    self._built.popitem(last=False)
        return value

    def _hit(self, key: str) -> tuple[T] | None:
        # A one-tuple, so that a kept value that is itself None still reads as found.
        with self._lock:
            if key and key in self._built:
                self._built.move_to_end(key)
                return (self._built[key],)
        return None
