"""One rate limit for every process that calls the same organisation: SEC's fair-access rule (at most 10
requests a second from one address) holds for the desk's web server, its workers and its commands together,
not for each of them on its own.

The next free slot lives in Redis, on Redis's own clock (``TIME``), so processes with skewed clocks agree.
Taking a slot is one Lua script: slot = max(now, next); next = slot + interval. The caller sleeps until its
slot. A slot further off than ``max_wait_s`` is not taken: the call is refused at once (``LimitBooked``),
never left asleep for minutes behind a queue of others. The key lives until a minute after the last slot
it has given out, so it never expires while a reserved slot is still ahead (an expired key would hand the
next caller "now" and let a burst through). A Redis that cannot be reached falls back to the process's own
limiter (agents.data.http.RateLimiter) for half a minute and says so in the log: SEC's limit is per
address, and one process alone still keeps it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import redis

from agents.data.http import FetchError, RateLimiter

log = logging.getLogger(__name__)
RETRY_SHARED_AFTER_S = 30.0  # after Redis failed, how long this process keeps to its own limit

# Returns the wait in microseconds, or -1 when the next free slot is further off than ARGV[2] (nothing
# taken). The key expires a minute after the last slot given out, never while one is still ahead.
_TAKE_SLOT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local next_slot = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, next_slot)
local interval = tonumber(ARGV[1])
if slot - now > tonumber(ARGV[2]) then
  return -1
end
redis.call('SET', KEYS[1], slot + interval, 'PX', math.floor((slot + interval - now) / 1000) + 60000)
return slot - now
"""
DEFAULT_MAX_WAIT_S = 60.0


class LimitBooked(FetchError):
    """Every slot of the shared limit within the longest wait is taken: try again later."""


class SharedRateLimiter:
    """Spaces calls at least ``1 / per_second`` seconds apart, across every process sharing ``key``."""

    def __init__(
        self,
        client: redis.Redis,
        per_second: float,
        *,
        key: str,
        sleep: Callable[[float], None] = time.sleep,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
    ) -> None:
        if per_second <= 0 or max_wait_s <= 0:
            raise ValueError("per_second and max_wait_s must be positive")
        self.key = key
        self._interval_us = round(1_000_000 / per_second)
        self._max_wait_us = round(max_wait_s * 1_000_000)
        self._take = client.register_script(_TAKE_SLOT)
        self._sleep = sleep
        self._local = RateLimiter(per_second, sleep=sleep)
        self._down_until = 0.0

    def wait(self) -> None:
        if time.monotonic() < self._down_until:
            self._local.wait()
            return
        try:
            wait_us = int(self._take(keys=[self.key], args=[self._interval_us, self._max_wait_us]))
        except redis.RedisError as exc:
            # redis-py spends seconds on its reconnect tries: not again for every request for a while.
            self._down_until = time.monotonic() + RETRY_SHARED_AFTER_S
            log.warning(
                "the shared rate limit %s is unreachable (%s): spacing this process alone", self.key, exc
            )
            self._local.wait()
            return
        if wait_us < 0:
            raise LimitBooked(
                f"the shared rate limit {self.key} is booked more than {self._max_wait_us / 1e6:g} s ahead "
                "by this desk's other requests: try again later"
            )
        if wait_us > 0:
            self._sleep(wait_us / 1_000_000)
