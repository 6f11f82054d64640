"""What pages keep in the shared cache is signed (issue 31 L11): the run page marks a cached pipeline safe,
so an entry written into Redis by anyone but the desk (a pickle, or plain markup) is never read: the page is
built afresh instead."""

from __future__ import annotations

import pickle

import pytest
import redis
from django.conf import settings

from memos.cache import cache_key, cached, shared_cache
from memos.cache_signing import SignedSerializer

pytestmark = pytest.mark.django_db


def raw_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def stored_name(key: str) -> str:
    """The key as Django's cache writes it in Redis (its prefix and version)."""
    return str(shared_cache().make_key(key))


def test_a_value_the_desk_kept_is_read_back() -> None:
    key = cache_key("test-signing", "kept")
    assert cached(key, lambda: "<p>built</p>", type_=str) == "<p>built</p>"
    assert cached(key, lambda: "<p>built again</p>", type_=str) == "<p>built</p>"  # from the cache
    assert shared_cache().get(key) == "<p>built</p>"


@pytest.mark.parametrize(
    "planted",
    [
        pickle.dumps("<script>alert(1)</script>"),  # a well-formed pickle, unsigned
        b"\x00" * 32 + pickle.dumps("<script>alert(1)</script>"),  # a signature that is not the desk's
    ],
)
def test_an_entry_the_desk_did_not_sign_is_never_read(planted: bytes) -> None:
    key = cache_key("test-signing", "planted", len(planted))
    raw_redis().set(stored_name(key), planted)
    assert cached(key, lambda: "<p>built afresh</p>", type_=str) == "<p>built afresh</p>"


def test_integers_stay_bare_for_incr() -> None:
    serializer = SignedSerializer()
    assert serializer.dumps(7) == 7 and serializer.loads(b"7") == 7
    signed = serializer.dumps({"a": [1, 2]})
    assert isinstance(signed, bytes) and serializer.loads(signed) == {"a": [1, 2]}
    with pytest.raises(pickle.UnpicklingError):
        serializer.loads(pickle.dumps({"a": 1}))
