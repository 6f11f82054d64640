"""agency.wsgi_thread: HTTP handed to Django as WSGI in the process's one thread, the answer sent from the
event loop. Driven here through its ASGI interface with a small WSGI application that says what it was given;
tests/memos/pages/test_web_server.py serves the desk's pages through it in the real server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agency.wsgi_thread import WsgiInOneThread

Message = dict[str, Any]


class Said:
    """A WSGI application answering with what it was given, as JSON; it notes the threads it ran and closed
    in."""

    def __init__(self) -> None:
        self.threads: set[str] = set()
        self.closed_in: set[str] = set()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        self.threads.add(threading.current_thread().name)
        body = environ["wsgi.input"].read()
        said = {
            name: environ.get(name)
            for name in (
                "REQUEST_METHOD",
                "PATH_INFO",
                "QUERY_STRING",
                "CONTENT_TYPE",
                "CONTENT_LENGTH",
                "HTTP_COOKIE",
                "HTTP_ACCEPT",
                "REMOTE_ADDR",
                "SERVER_NAME",
                "SERVER_PORT",
            )
        } | {"body_length": len(body), "body_end": body[-8:].decode()}
        start_response("201 Created", [("Content-Type", "application/json"), ("X-Said", "yes")])
        return self._answer(json.dumps(said).encode())

    def _answer(self, data: bytes) -> Iterator[bytes]:
        try:
            yield data[:10]
            yield data[10:]
        finally:
            self.closed_in.add(threading.current_thread().name)


def scope(method: str = "GET", headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/runs/ü/",
        "query_string": b"a=1&b=2",
        "root_path": "",
        "headers": headers or [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def ask(app: WsgiInOneThread, request: dict[str, Any], chunks: list[bytes]) -> list[Message]:
    sent: list[Message] = []
    last = len(chunks) - 1
    incoming = [
        {"type": "http.request", "body": chunk, "more_body": n < last} for n, chunk in enumerate(chunks)
    ]

    async def receive() -> Message:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(request, receive, send)
    return sent


def test_the_request_reaches_the_application_whole_and_its_answer_comes_back() -> None:
    app = WsgiInOneThread(Said())
    headers = [
        (b"cookie", b"sessionid=abc"),
        (b"cookie", b"csrftoken=def"),
        (b"accept", b"text/html"),
        (b"accept", b"application/json"),
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", b"120000"),
    ]
    # 120 KB in three parts: more than is kept in memory before it spills to a file.
    chunks = [b"a" * 40_000, b"b" * 40_000, b"c" * 39_992 + b"the-end!"]
    start, body = asyncio.run(ask(app, scope("POST", headers), chunks))
    assert start == {
        "type": "http.response.start",
        "status": 201,
        "headers": [(b"content-type", b"application/json"), (b"x-said", b"yes")],
    }
    said = json.loads(body["body"])
    assert said == {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/runs/ü/".encode().decode("latin1"),  # PEP 3333: bytes as latin-1
        "QUERY_STRING": "a=1&b=2",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": "120000",
        "HTTP_COOKIE": "sessionid=abc; csrftoken=def",  # cookies joined by their own rule
        "HTTP_ACCEPT": "text/html,application/json",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "body_length": 120_000,
        "body_end": "the-end!",
    }
    assert body.get("more_body", False) is False


def test_every_request_runs_and_closes_in_the_one_thread() -> None:
    """Five hundred requests in a row, as a keep-alive client sends them: each answered, each run and closed
    in the same thread (not the event loop's), where Django keeps its database connections."""
    said = Said()
    app = WsgiInOneThread(said)

    async def many() -> list[int]:
        statuses = []
        for _ in range(500):
            start, _body = await ask(app, scope(), [b""])
            statuses.append(start["status"])
        return statuses

    assert asyncio.run(many()) == [201] * 500
    assert len(said.threads) == 1 and said.closed_in == said.threads
    assert said.threads != {threading.current_thread().name}


def test_a_client_gone_before_its_body_ends_runs_nothing() -> None:
    said = Said()
    app = WsgiInOneThread(said)
    sent: list[Message] = []
    incoming: list[Message] = [
        {"type": "http.request", "body": b"part", "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope("POST"), receive, send))
    assert sent == [] and said.threads == set()
