"""A fake OpenAI-compatible HTTP server on 127.0.0.1, for the real ``openai`` client path in tests and demos.

It answers ``POST /v1/chat/completions`` with schema-valid JSON made from the request's
``response_format.json_schema.schema`` (the same request always gets the same answer), realistic ``usage``,
and an optional per-request latency. Scripted answers are keyed by prompt name and role together
(``"evaluator@second_evaluator"``: one prompt asked by two roles), by prompt name (``X-Prompt-Name``) or by
role (``X-Analyst-Role``), the first of these that has answers left, consumed in order (in-process, a scripted
answer may be a function of the request's schema and messages: an answer shaped like the request, with one
thing changed); then a workflow's canned answer for the role, where the server was given the modules that
hold them (``answers``: each workflow declares its own); then a generated answer. Faults are queued through
``POST /_control/faults`` (or ``inject``) and consumed one per matching request, in order:

- ``"500"``, ``"503"``, ``"400"``, ... any HTTP status; ``"429"`` sends ``Retry-After`` when given
  ``retry_after`` (seconds);
- ``"hang"``: say nothing for ``seconds`` (default 30), then drop the connection;
- ``"disconnect"``: drop the connection without a response;
- ``"truncated"``: a 200 whose JSON body is cut in half;
- ``"invalid_schema"``: valid JSON content that does not match the schema; ``"not_json"``: content that is
  not JSON; ``"length"``: half an answer with ``finish_reason: "length"``, its usage the request's
  ``max_tokens`` (cut at its bound); ``"context"``: the same, its usage what it wrote (the server's context
  window ran out first, as llama-server's per-slot window does under a long prompt); ``"looping"``: an answer
  that repeats one phrase until it is cut off (``finish_reason: "length"``), as a small model does;
- ``{"kind": "raw", "status": 200, "body_b64": "...", "content_type": "application/json"}``: exactly these
  bytes (any bytes, invalid UTF-8 included) with this status (200-599, default 200) and content type (default
  ``application/json``; ``null`` sends none), plus optional extra ``headers``. For the malformed-answer tests.
  A status that may not carry a body (204, 304) still gets the bytes, then the connection is closed so the
  stray bytes cannot be read as the next reply.

A request asking ``"stream": true`` (the embedded model's, agents.llm.providers.streaming) gets its answer as
llama-server streams it: server-sent events of a few characters each, paced, then the finish reason, the
usage and ``[DONE]``; a looping answer streams until the client stops reading it. The word faults that
replace the content apply to it as to a whole reply; the others send what they always send.

Every chat-completion request is logged with ``hash``, the SHA-256 of its JSON body in canonical form
(``body_hash``). ``received_by_hash`` counts the requests received per hash; ``completed_by_hash`` counts the
answers written and flushed in full: a 200 chat completion (generated, scripted or shaped by a content fault),
never an error status, a truncated or raw body, a hang or a disconnect. An answer is counted just before its
last byte is sent (and uncounted if that byte cannot be), so a client that has read it sees the count. A
request's log entry says ``completed`` too. ``in_flight`` is the number of requests being handled right now.

``GET /_control/requests`` returns the request log, the count, the most requests ever in flight at once, the
number in flight now and both per-hash counters; ``POST /_control/reset`` forgets faults, log and counters
(a request still in flight at a reset is not counted after it) and restarts the script. ``GET /v1/models`` and
``GET /health`` answer too.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import importlib
import json
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from agents.llm.fakes.inprocess import approx_tokens
from agents.llm.fakes.schema_example import UnsupportedSchema, example_for_schema
from agents.llm.hashing import canonical_json, sha256_hex

ROLE_HEADER = "X-Analyst-Role"
PROMPT_HEADER = "X-Prompt-Name"
WORD_FAULTS = frozenset(
    {"hang", "disconnect", "truncated", "invalid_schema", "not_json", "length", "context", "looping"}
)
# What a looping answer repeats until its bound: the 1.5B's way of filling a field with the ids it was shown.
LOOP = "[[XOM:return_1w:2017-09-01]], [[CVX:return_1w:2017-09-01]] "
LOOP_REPEATS = 60  # about 900 tokens: a screen reading's bound
# A streamed loop runs on for as long as it is read (about 4,000 tokens): a client that stops reading it is
# seen to, by what the server had sent when it went away.
STREAMED_LOOP_REPEATS = 270
RAW_FAULT = "raw"
DEFAULT_HANG_S = 30.0
SHUTDOWN_POLL_S = 0.02
MIN_STATUS, MAX_STATUS = 400, 599
MIN_RAW_STATUS = 200  # a 1xx is not a final reply: the client would wait for another
BODYLESS_STATUSES = frozenset({204, 304})
JSON_TYPE = "application/json"
# A streamed answer (asked with "stream": true) leaves this many characters an event, one event this often.
STREAM_PIECE_CHARS = 16
STREAM_PIECE_S = 0.001

# A workflow's canned answer for one of its roles: (role, the request's JSON schema, its messages) -> the
# answer, or None to fall back to the generic example of the schema. A workflow names the module whose
# ``FAKE_ROLES`` maps its roles to these (memos.pipeline.workflows.Workflow.fakes).
FakeAnswer = Callable[[str, Mapping[str, Any], Any], Any | None]


def load_answers(modules: Sequence[str]) -> dict[str, FakeAnswer]:
    """The roles' answers of every module named; a role two modules answer is refused (one of them would be
    silently ignored)."""
    found: dict[str, FakeAnswer] = {}
    for name in modules:
        roles: Mapping[str, FakeAnswer] = importlib.import_module(name).FAKE_ROLES
        taken = sorted(set(roles) & set(found))
        if taken:
            raise ValueError(f"{name} answers roles another module answers already: {', '.join(taken)}")
        found.update(roles)
    return found


def body_hash(body: Any) -> str:
    """The request's content hash, as logged and counted: SHA-256 of its JSON body in canonical form."""
    try:
        return sha256_hex(canonical_json(body))
    except ValueError:  # NaN or Infinity, which canonical JSON refuses: keep them, spelled one way
        return sha256_hex(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


@dataclass(frozen=True)
class Fault:
    kind: str
    retry_after: float | None = None
    seconds: float = DEFAULT_HANG_S
    role: str | None = None
    prompt: str | None = None
    # Only for "raw": the reply to send as it is.
    status: int = 200
    body: bytes = b""
    content_type: str | None = JSON_TYPE
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(
        cls, spec: Mapping[str, Any] | str, *, role: str | None = None, prompt: str | None = None
    ) -> Fault:
        data: dict[str, Any] = {"kind": spec} if isinstance(spec, str) else dict(spec)
        kind = str(data.get("kind", ""))
        if kind == RAW_FAULT:
            return cls._parse_raw(data, role=role, prompt=prompt)
        if kind not in WORD_FAULTS and not (kind.isdigit() and MIN_STATUS <= int(kind) <= MAX_STATUS):
            raise ValueError(
                f"unknown fault kind {kind!r}: an HTTP status 400-599, {RAW_FAULT!r} "
                f"or one of {sorted(WORD_FAULTS)}"
            )
        retry_after = data.get("retry_after")
        return cls(
            kind=kind,
            retry_after=float(retry_after) if retry_after is not None else None,
            seconds=float(data.get("seconds", DEFAULT_HANG_S)),
            role=data.get("role", role),
            prompt=data.get("prompt", prompt),
        )

    @classmethod
    def _parse_raw(cls, data: dict[str, Any], *, role: str | None, prompt: str | None) -> Fault:
        status = data.get("status", 200)
        if not isinstance(status, int) or not MIN_RAW_STATUS <= status <= MAX_STATUS:
            raise ValueError(f"a raw fault's status must be an integer {MIN_RAW_STATUS}-{MAX_STATUS}")
        encoded = data.get("body_b64")
        if not isinstance(encoded, str):
            raise ValueError('a raw fault needs "body_b64", its body in base64')
        try:
            body = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise ValueError(f'a raw fault\'s "body_b64" is not base64: {exc}') from exc
        content_type = data.get("content_type", JSON_TYPE)
        headers = data.get("headers") or {}
        if not (content_type is None or isinstance(content_type, str)) or not (
            isinstance(headers, Mapping) and all(isinstance(v, str) for v in headers.values())
        ):
            raise ValueError(
                'a raw fault\'s "content_type" is a string or null, "headers" an object of strings'
            )
        return cls(
            kind=RAW_FAULT,
            role=data.get("role", role),
            prompt=data.get("prompt", prompt),
            status=status,
            body=body,
            content_type=content_type,
            headers=tuple((str(name), value) for name, value in headers.items()),
        )

    def matches(self, role: str, prompt: str) -> bool:
        return (self.role is None or self.role == role) and (self.prompt is None or self.prompt == prompt)


class _State:
    """Everything the handler threads share, behind one lock."""

    def __init__(
        self,
        latency_ms: float,
        script: Mapping[str, Sequence[Any]],
        models: Sequence[str],
        answers: Mapping[str, FakeAnswer],
    ) -> None:
        self.lock = threading.Lock()
        self.answers = dict(answers)
        self.stopping = threading.Event()
        self.latency_s = latency_ms / 1000
        self.models = list(models)
        self.script_source = {key: list(answers) for key, answers in script.items()}
        self.in_flight = 0  # a gauge of requests being handled, not a counter: a reset leaves it alone
        self.generation = 0
        self.reset()
        self.connections: set[socket.socket] = set()

    def reset(self) -> None:
        self.script = {key: deque(answers) for key, answers in self.script_source.items()}
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        self.max_in_flight = self.in_flight
        self.received: Counter[str] = Counter()
        self.completed: Counter[str] = Counter()
        # Requests that began before this reset finish without touching the new log and counters.
        self.generation += 1

    def begin(self, entry: dict[str, Any], role: str, prompt: str) -> tuple[Fault | None, int]:
        with self.lock:
            self.log.append(entry)
            self.received[entry["hash"]] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            for index, fault in enumerate(self.faults):
                if fault.matches(role, prompt):
                    del self.faults[index]
                    entry["fault"] = fault.kind
                    return fault, self.generation
        return None, self.generation

    def complete(self, entry: dict[str, Any], generation: int) -> None:
        with self.lock:
            if generation == self.generation:
                entry["completed"] = True
                self.completed[entry["hash"]] += 1

    def end(self, entry: dict[str, Any], generation: int, *, delivered: bool) -> None:
        with self.lock:
            self.in_flight -= 1
            if not delivered and entry["completed"] and generation == self.generation:
                # Counted just before its last byte, which then could not be written: take it back.
                entry["completed"] = False
                self.completed[entry["hash"]] -= 1
                if not self.completed[entry["hash"]]:
                    del self.completed[entry["hash"]]

    def report(self) -> dict[str, Any]:
        with self.lock:
            log = json.loads(json.dumps(self.log))
            return {
                "count": len(log),
                "max_in_flight": self.max_in_flight,
                "in_flight": self.in_flight,
                "received_by_hash": dict(self.received),
                "completed_by_hash": dict(self.completed),
                "requests": log,
            }

    def scripted(self, role: str, prompt: str) -> Any | None:
        with self.lock:
            for key in (f"{prompt}@{role}", prompt, role):
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
    _arrived = 0.0  # when the request being handled arrived (time.monotonic)

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
            self._json(200, state.report())
        else:
            self._error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        # The latency counts from here, as a real endpoint's does: reading the request is part of it.
        self._arrived = time.monotonic()
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
        entry = {
            "role": role,
            "prompt_name": prompt,
            "model": body.get("model"),
            "body": body,
            "hash": body_hash(body),
            "fault": None,
            "completed": False,
        }
        fault, generation = state.begin(entry, role, prompt)
        delivered = False

        def count_completed() -> None:
            state.complete(entry, generation)

        try:
            # Without a fault, the answer is written within the latency, as a real endpoint's is: the
            # fake's own work of writing it (an example of a large schema, a bench's answerer reading the
            # prompt) is not the client's overhead.
            early = self._answer(body, role, prompt) if fault is None else None
            waited = time.monotonic() - self._arrived
            if state.latency_s and state.stopping.wait(max(0.0, state.latency_s - waited)):
                self.close_connection = True
                return
            kind = fault.kind if fault is not None else None
            if fault is not None and self._fault(fault, body):
                return
            # A content fault replaces the answer without using up a scripted one.
            if early is not None:
                content = early
            elif kind == "invalid_schema":
                content = self._generated(body, invalid=True)
            elif kind == "not_json":
                content = "Sure! Here is the analysis you asked for, in prose rather than JSON."
            else:
                content = self._answer(body, role, prompt)
            if kind == "looping":
                repeats = STREAMED_LOOP_REPEATS if body.get("stream") is True else LOOP_REPEATS
                content = '{"synthesis": "The sector ' + LOOP * repeats
            cut, finish_reason = (
                (content[: len(content) // 2], "length")
                if kind in {"length", "context"}
                else (content, "length" if kind == "looping" else "stop")
            )
            at_bound = finish_reason == "length" and kind != "context"
            completion = _completion(body, cut, finish_reason, at_bound=at_bound)
            if body.get("stream") is True:
                delivered = self._stream(completion, entry, before_last_byte=count_completed)
            else:
                self._send(200, json.dumps(completion).encode(), before_last_byte=count_completed)
                delivered = True
        except UnsupportedSchema as exc:
            self._error(400, f"the fake server cannot answer this schema: {exc}")
        finally:
            state.end(entry, generation, delivered=delivered)

    def _stream(
        self, completion: dict[str, Any], entry: dict[str, Any], *, before_last_byte: Callable[[], None]
    ) -> bool:
        """Send the completion as llama-server streams one: its answer a few characters an event, paced as a
        model writes, then its finish reason, its usage and ``[DONE]``; the connection closes after. The
        characters of answer sent before the client went away are kept in ``entry["streamed_chars"]``.
        Returns whether the client read it all."""
        choice = completion["choices"][0]
        content = str(choice["message"]["content"])
        head = {key: completion[key] for key in ("id", "object", "created", "model")}
        head["object"] = "chat.completion.chunk"

        def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            return f"data: {json.dumps(head | {'choices': choices} | extra)}\n\n".encode()

        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        entry["streamed_chars"] = 0
        try:
            for start in range(0, len(content), STREAM_PIECE_CHARS):
                piece = content[start : start + STREAM_PIECE_CHARS]
                self.wfile.write(event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
                self.wfile.flush()
                entry["streamed_chars"] += len(piece)
                time.sleep(STREAM_PIECE_S)
            self.wfile.write(event([{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]))
            self.wfile.write(event([], usage=completion["usage"]))
            self.wfile.write(b"data: [DONE]\n\n"[:-1])
            self.wfile.flush()
            before_last_byte()
            self.wfile.write(b"\n")
            self.wfile.flush()
        except ConnectionError:  # the client stopped reading: a loop it cut short
            return False
        return True

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
        if fault.kind == RAW_FAULT:
            headers = dict(fault.headers)
            if fault.status in BODYLESS_STATUSES:
                # The client reads no body after these, so the bytes would be taken for the next reply.
                headers["Connection"] = "close"
                self.close_connection = True
            self._send(fault.status, fault.body, headers, content_type=fault.content_type)
            return True
        return False

    def _answer(self, body: dict[str, Any], role: str, prompt: str) -> str:
        scripted = self.server.state.scripted(role, prompt)
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if callable(scripted):
            scripted = scripted(schema if isinstance(schema, dict) else {}, body.get("messages") or [])
        canned = self.server.state.answers.get(role)
        if scripted is None and canned is not None and isinstance(schema, dict):
            try:
                answer = canned(role, schema, body.get("messages"))
            except ValueError:  # the role asked with another schema (a warm-up's): a generated answer
                answer = None
            if answer is not None:
                return json.dumps(answer)
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

    def _send(
        self,
        status: int,
        data: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str | None = JSON_TYPE,
        before_last_byte: Callable[[], None] | None = None,
    ) -> None:
        """Send one reply. ``before_last_byte`` runs once all but the last byte have left: a client that has
        read the whole reply is sure to see what it did (the completed count)."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if before_last_byte is not None and data:
            self.wfile.write(data[:-1])
            self.wfile.flush()
            before_last_byte()
            data = data[-1:]
        self.wfile.write(data)
        self.wfile.flush()


def _completion(
    body: dict[str, Any], content: str, finish_reason: str, *, at_bound: bool = False
) -> dict[str, Any]:
    """``at_bound``: the answer was cut at the request's ``max_tokens``, which its usage then reports."""
    messages = body.get("messages") or []
    prompt_tokens = sum(approx_tokens(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
    completion_tokens = approx_tokens(content)
    if at_bound and isinstance(bound := body.get("max_tokens"), int):
        completion_tokens = max(completion_tokens, bound)
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
        answers: Sequence[str] = (),
    ) -> None:
        """``answers``: the modules whose ``FAKE_ROLES`` answer the workflows' roles (memos.pipeline.registry
        names every workflow's)."""
        self._state = _State(latency_ms, script or {}, models, load_answers(answers))
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
        """Chat-completion requests so far, oldest first: role, prompt_name, model, body, hash, fault,
        completed."""
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

    @property
    def in_flight(self) -> int:
        """Chat-completion requests being handled right now."""
        with self._state.lock:
            return self._state.in_flight

    @property
    def received_by_hash(self) -> dict[str, int]:
        """How many chat-completion requests arrived per ``body_hash``."""
        with self._state.lock:
            return dict(self._state.received)

    @property
    def completed_by_hash(self) -> dict[str, int]:
        """How many answers per ``body_hash`` were written and flushed in full (200 chat completions only)."""
        with self._state.lock:
            return dict(self._state.completed)


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
