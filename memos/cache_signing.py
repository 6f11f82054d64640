"""The shared cache's serializer: what the desk keeps in Redis is signed with the server's secret, and an
entry whose signature does not match is never unpickled. The cache holds rendered HTML that pages mark safe
(a finished run's pipeline, the fact store's table): a value written into Redis by anyone but the desk must
not reach a page as markup, nor be unpickled at all (issue 31 L11).

Django's Redis cache pickles everything but integers (which it keeps bare for ``incr``); this does the same,
with an HMAC-SHA256 of the pickle before it.
"""

from __future__ import annotations

import hashlib
import hmac
import pickle
from typing import Any

from django.conf import settings

_SALT = b"memos.cache_signing"
_MAC_BYTES = 32


def _mac(body: bytes) -> bytes:
    return hmac.new(settings.SECRET_KEY.encode() + _SALT, body, hashlib.sha256).digest()


class SignedSerializer:
    def __init__(self, protocol: int | None = None) -> None:
        self.protocol = pickle.HIGHEST_PROTOCOL if protocol is None else protocol

    def dumps(self, obj: Any) -> bytes | int:
        if type(obj) is int:  # bare, as Django keeps it, so incr() and decr() work on it
            return obj
        body = pickle.dumps(obj, self.protocol)
        return _mac(body) + body

    def loads(self, data: bytes) -> Any:
        try:
            return int(data)
        except ValueError:
            pass
        mac, body = data[:_MAC_BYTES], data[_MAC_BYTES:]
        if not hmac.compare_digest(mac, _mac(body)):
            # The caller treats it as an unreadable entry and computes the value afresh (memos.cache).
            raise pickle.UnpicklingError("a cache entry the desk did not sign: ignored")
        return pickle.loads(body)  # noqa: S301 - signed by this desk's secret just above
