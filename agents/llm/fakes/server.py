"""A fake OpenAI-compatible HTTP server on 127.0.0.1, for the real ``openai`` client path in tests and demos.

It answers ``POST /v1/chat/completions`` with schema-valid JSON made from the request's
``response_format.json_schema.schema`` (the same request always gets the same answer), realistic ``usage``,
and an optional per-request latency. Scripted answers are keyed by prompt name (``X-Prompt-Name``) or role
(``X-Analyst-Role``), consumed in order, then it falls back to generated answers. Faults are queued through
``POST /_control/faults`` (or ``inject``) and consumed one per matching request, in order:

- ``"500"``, ``"503"``, ``"400"``, ... any HTTP status; ``"429"`` sends ``Retry-After`` when given
  ``retry_after`` (seconds);
- ``"hang"``: say nothing for ``seconds`` (default 30), then drop the connection;
- ``"disconnect"``: drop the connection without a response;
- ``"truncated"``: a 200 whose JSON body is cut in half;
- ``"invalid_schema"``: valid JSON content that does not match the schema; ``"not_json"``: content that is
  not JSON; ``"length"``: half an answer with ``finish_reason: "length"``.

``GET /_control/requests`` returns the request log, the count and the most requests ever in flight at once;
``POST /_control/reset`` forgets faults, log and counters and restarts the script. ``GET /v1/models`` and
``GET /health`` answer too.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from agents.llm.fakes.inprocess import approx_tokens
from agents.llm.fakes.schema_example import UnsupportedSchema, example_for_schema
from agents.llm.hashing import canonical_json, sha256_hex

ROLE_HEADER = "X-Analyst-Role"
PROMPT_HEADER = "X-Prompt-Name"
WORD_FAULTS = frozenset({"hang", "disconnect", "truncated", "invalid_schema", "not_json", "length"})
DEFAULT_HANG_S = 30.0
SHUTDOWN_POLL_S = 0.02
MIN_STATUS, MAX_STATUS = 400, 599


@dataclass(frozen=True)
class Fault:
    kind: str
    retry_after: float | None = None
    seconds: float = DEFAULT_HANG_S
    role: str | None = None
    prompt: str | None = None

    @classmethod
    def parse(
        cls, spec: Mapping[str, Any] | str, *, role: str | None = None, prompt: str | None = None
    ) -> Fault:
        data: dict[str, Any] = {"kind": spec} if isinstance(spec, str) else dict(spec)
        kind = str(data.get("kind", ""))
        if kind not in WORD_FAULTS and not (kind.isdigit() and MIN_STATUS <= int(kind) <= MAX_STATUS):
            raise ValueError(
                f"unknown fault kind {kind!r}: an HTTP status 400-599 or one of {sorted(WORD_FAULTS)}"
            )
        retry_after = data.get("retry_after")
        return cls(
            kind=kind,
            retry_after=float(retry_after) if retry_after is not None else None,
            seconds=float(data.get("seconds", DEFAULT_HANG_S)),
            role=data.get("role", role),
            prompt=data.get("prompt", prompt),
        )

    def matches(self, role: str, prompt: str) -> bool:
        return (self.role is None or self.role == role) and (self.prompt is None or self.prompt == prompt)


class _State:
    """Everything the handler threads share, behind one lock."""

    def __init__(self, latency_ms: float, script: Mapping[str, Sequence[Any]], models: Sequence[str]) -> None:
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.latency_s = latency_ms / 1000
        self.models = list(models)
        self.script_source = {key: list(answers) for key, answers in script.items()}
        self.reset()
        self.connections: set[socket.socket] = set()

    def reset(self) -> None:
        self.script = {key: deque(answers) for key, answers in self.script_source.items()}
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    def begin(self, entry: dict[str, Any], role: str, prompt: str) -> Fault | None:
        with self.lock:
            self.log.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            for index, fault in enumerate(self.faults):
                if fault.matches(role, prompt):
                    del self.faults[index]
                    entry["fault"] = fault.kind
                    return fault
        return None

    def end(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def scripted(self, role: str, prompt: str) -> Any | None:
        with self.lock:
            for key in (prompt, role):
                answers = self.script.get(key)
                if answers:
                    return answers.popleft()
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        self.state = state
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (its timeout) before the reply is expected here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects; every reply has a length
    # Headers and body leave in one segment, at once: small writes would wait on Nagle and delayed ACKs.
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.state.lock:
            self.server.state.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``requests`` instead of stderr."""

    def do_GET(self) -> None:
        state = self.server.state
        if self.path == "/health":
            self._json(200, {"status": "ok"})
        elif self.path.rstrip("/") == "/v1/models":
            data = [{"id": model, "object": "model", "owned_by": "fake"} for model in state.models]
            self._json(200, {"object": "list", "data": data})
        elif self.path == "/_control/requests":
            with state.lock:
                log = json.loads(json.dumps(state.log))
                report = {"count": len(log), "max_in_flight": state.max_in_flight, "requests": log}
            self._json(200, report)
        else:
            self._error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        body = self._read_json()
        if body is None:
            return
        if self.path.rstrip("/") == "/v1/chat/completions":
            self._chat(body)
        elif self.path == "/_control/faults":
            self._queue_faults(body)
        elif self.path == "/_control/reset":
            with self.server.state.lock:
                self.server.state.reset()
            self._json(200, {"reset": True})
        else:
            self._error(404, f"no route for POST {self.path}")

    def _queue_faults(self, body: dict[str, Any]) -> None:
        try:
            faults = [
                Fault.parse(f, role=body.get("role"), prompt=body.get("prompt")) for f in body["faults"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            self._error(400, f'expected {{"faults": [{{"kind": ...}}], "role": optional}}: {exc}')
            return
        with self.server.state.lock:
            self.server.state.faults.extend(faults)
        self._json(200, {"queued": len(faults)})

    def _chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        role, prompt = self.headers.get(ROLE_HEADER, ""), self.headers.get(PROMPT_HEADER, "")
        entry = {"role": role, "prompt_name": prompt, "model": body.get("model"), "body": body, "fault": None}
        fault = state.begin(entry, role, prompt)
        try:
            if state.latency_s and state.stopping.wait(state.latency_s):
                self.close_connection = True
                return
            kind = fault.kind if fault is not None else None
            if fault is not None and self._fault(fault, body):
                return
            # A content fault replaces the answer without using up a scripted one.
            if kind == "invalid_schema":
                content = self._generated(body, invalid=True)
            elif kind == "not_json":
                content = "Sure! Here is the analysis you asked for, in prose rather than JSON."
            else:
                content = self._answer(body, role, prompt)
            if kind == "length":
                self._json(200, _completion(body, content[: len(content) // 2], "length"))
            else:
                self._json(200, _completion(body, content, "stop"))
        except UnsupportedSchema as exc:
            self._error(400, f"the fake server cannot answer this schema: {exc}")
        finally:
            state.end()

    def _fault(self, fault: Fault, body: dict[str, Any]) -> bool:
        """Act out the fault; True when the reply (or the silence) is complete."""
        if fault.kind.isdigit():
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            self._error(int(fault.kind), f"injected fault: HTTP {fault.kind}", headers)
            return True
        if fault.kind in {"hang", "disconnect"}:
            if fault.kind == "hang":
                self.server.state.stopping.wait(fault.seconds)
            self.close_connection = True
            return True
        if fault.kind == "truncated":
            whole = json.dumps(_completion(body, self._generated(body, invalid=False), "stop")).encode()
            self._send(200, whole[: len(whole) // 2])
            return True
        return False

    def _answer(self, body: dict[str, Any], role: str, prompt: str) -> str:
        scripted = self.server.state.scripted(role, prompt)
        if scripted is None:
            return self._generated(body, invalid=False)
        return scripted if isinstance(scripted, str) else json.dumps(scripted)

    def _generated(self, body: dict[str, Any], *, invalid: bool) -> str:
        response_format = body.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            return "This is a fake answer: the request asked for no JSON schema."
        if invalid:
            # Whatever the schema wants at the top level, this is the other thing.
            return json.dumps(
                {"not": "what you asked for"} if schema.get("type") == "array" else ["not", "it"]
            )
        seed = int(sha256_hex(canonical_json([body.get("messages"), schema]))[:12], 16)
        return json.dumps(example_for_schema(schema, seed=seed))

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._error(400, f"the request body is not JSON: {exc}")
            return None
        if not isinstance(body, dict):
            self._error(400, "the request body must be a JSON object")
            return None
        return body

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        payload = {"error": {"message": message, "type": "fake_error", "code": str(status)}}
        self._send(status, json.dumps(payload).encode(), headers)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _completion(body: dict[str, Any], content: str, finish_reason: str) -> dict[str, Any]:
    messages = body.get("messages") or []
    prompt_tokens = sum(approx_tokens(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
    completion_tokens = approx_tokens(content)
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class FakeLLMServer:
    """The fake server in a background thread: ``with FakeLLMServer() as server: ... server.url ...``."""

    def __init__(
        self,
        port: int = 0,
        latency_ms: float = 0,
        script: Mapping[str, Sequence[Any]] | None = None,
        *,
        models: Sequence[str] = ("fake-model",),
    ) -> None:
        self._state = _State(latency_ms, script or {}, models)
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._httpd = _Server(("127.0.0.1", self._port), self._state)
        # A short poll interval: stop() waits up to one interval for the serving loop to notice.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(SHUTDOWN_POLL_S,), name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._state.stopping.set()
        self._httpd.shutdown()
        with self._state.lock:
            open_connections = list(self._state.connections)
        for connection in open_connections:
            # Wake handler threads parked on idle keep-alive connections so none outlives the server.
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake LLM server is not running")
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The base URL for an OpenAI client (``.../v1``)."""
        return f"{self.root_url}/v1"

    def inject(
        self, *faults: Mapping[str, Any] | str, role: str | None = None, prompt: str | None = None
    ) -> None:
        parsed = [Fault.parse(f, role=role, prompt=prompt) for f in faults]
        with self._state.lock:
            self._state.faults.extend(parsed)

    def reset(self) -> None:
        with self._state.lock:
            self._state.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Chat-completion requests so far, oldest first: role, prompt_name, model, body, fault."""
        with self._state.lock:
            return [dict(entry) for entry in self._state.log]

    @property
    def request_count(self) -> int:
        with self._state.lock:
            return len(self._state.log)

    @property
    def max_in_flight(self) -> int:
        with self._state.lock:
            return self._state.max_in_flight


def load_script(entries: Any) -> dict[str, list[Any]]:
    """Check a script's shape ({key: [answers]}, each answer an object or a string) and return it."""
    if not isinstance(entries, Mapping):
        raise ValueError('a script is a JSON object: {"role or prompt name": [answers...]}')
    script: dict[str, list[Any]] = {}
    for key, answers in entries.items():
        if not isinstance(answers, list) or not all(isinstance(a, dict | str) for a in answers):
            raise ValueError(f"script entry {key!r} must be a list of JSON objects or strings")
        script[str(key)] = list(answers)
    return script
