"""HTTP requests handed to Django as WSGI, each in one hop to the process's one thread for synchronous work.

Every view and middleware of the desk is synchronous. Through Django's ASGI handler, each hook of its nine
middlewares (process_request, process_view, process_response) ran in the process's thread for synchronous work
by a hop of its own from the event loop: 17 hops a request, 5 ms of CPU before any view ran (a 404 for a
stranger), under 1 ms here (README, Performance: pages). asgiref's ``WsgiToAsgi`` does the same in one hop,
but sends the answer back through ``async_to_sync`` from the thread, which asgiref 3.9+ breaks
("CurrentThreadExecutor already quit or is broken", asgiref issue 491, seen here after some hundred requests):
the answer is made whole in the thread and sent from the event loop instead. The desk's answers are whole
pages and stored files, never streams.

One thread, as Django's ASGI handler kept for synchronous code (``thread_sensitive``): requests of a process
take turns in it, and its database connections stay the thread's own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from tempfile import SpooledTemporaryFile
from typing import IO, Any

Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

BODY_IN_MEMORY = 65536  # bytes of a request body kept in memory before it spills to a temporary file


@dataclass
class Answer:
    status: int = 500
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        self.status = int(status.split(" ", 1)[0])
        self.headers = [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers]


class WsgiInOneThread:
    """An ASGI application for HTTP that runs ``app`` (WSGI) in one thread of its own."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wsgi")

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"an HTTP application was given a {scope['type']} connection")
        with SpooledTemporaryFile(max_size=BODY_IN_MEMORY) as body:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                body.write(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body.seek(0)
            loop = asyncio.get_running_loop()
            answer = await loop.run_in_executor(self.thread, self._answer, environ_of(scope, body))
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        await send({"type": "http.response.body", "body": b"".join(answer.chunks)})

    def _answer(self, environ: dict[str, Any]) -> Answer:
        answer = Answer()
        result = self.app(environ, answer.start_response)
        try:
            answer.chunks.extend(result)
        finally:
            # Django's request_finished (its database connections go back) runs here, in this thread.
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return answer


def environ_of(scope: dict[str, Any], body: IO[bytes]) -> dict[str, Any]:
    """PEP 3333's environ for an ASGI HTTP scope."""
    root = scope.get("root_path", "").encode("utf8").decode("latin1")
    path = scope["path"].encode("utf8").decode("latin1")
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root,
        "PATH_INFO": path.removeprefix(root),
        "QUERY_STRING": scope["query_string"].decode("ascii"),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1] if server[1] is not None else 0),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if scope.get("client"):
        environ["REMOTE_ADDR"] = scope["client"][0]
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin1").upper().replace("-", "_")
        key = name if name in ("CONTENT_LENGTH", "CONTENT_TYPE") else f"HTTP_{name}"
        value = raw_value.decode("latin1")
        if key in environ:  # a header sent twice: one value, as PEP 3333 has it (cookies by their own rule)
            value = environ[key] + ("; " if key == "HTTP_COOKIE" else ",") + value
        environ[key] = value
    return environ
