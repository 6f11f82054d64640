"""``Server-Timing`` on every response where ``SERVER_TIMING`` is on: the app's share of an answer.

A slow answer seen from outside is the app's own work plus the server's queue (uvicorn's event loop, the
thread a synchronous view waits for, a process busy with another request) plus the client's. The header
names the first: ``app`` is the wall time from this middleware (the outermost) to its response, ``cpu``
the thread's CPU time over it, so ``app`` less ``cpu`` is the app waiting (the database, Redis, the GIL).
The load benchmark (tests/bench/test_load_bench.py) reads it beside what its clients measure; a browser's
network panel shows it too. Off by default: it tells any client how long a request took inside.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest
from django.http.response import HttpResponseBase


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started, cpu = time.perf_counter(), time.thread_time()
        response = self.get_response(request)
        wall_ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
        response["Server-Timing"] = f"app;dur={wall_ms:.1f}, cpu;dur={cpu_ms:.1f}"
        return response
