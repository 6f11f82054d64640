"""The fake OpenAI-compatible server over plain HTTP: routes, control endpoints, scripts and faults."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agents.llm.fakes.child_process import FakeLLMServerProcess
from agents.llm.fakes.inprocess import approx_tokens
from agents.llm.fakes.server import FakeLLMServer, body_hash, load_script
from agents.llm.hashing import canonical_json, sha256_hex

SCHEMA = {
    "type": "object",
    "properties": {"status": {"const": "ok"}, "count": {"type": "integer", "minimum": 1, "maximum": 3}},
    "required": ["status", "count"],
    "additionalProperties": False,
}


def chat_body(user: str = "hello") -> dict[str, Any]:
    return {
        "model": "fake-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": user}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Out", "schema": SCHEMA, "strict": True},
        },
    }


def call(
    url: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], dict[str, str]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read()), dict(error.headers)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(models=("fake-model", "judge-model")) as running:
        yield running


def test_health_and_models_answer(server: FakeLLMServer) -> None:
    assert call(f"{server.root_url}/health")[:2] == (200, {"status": "ok"})
    status, models, _ = call(f"{server.url}/models")
    assert status == 200
    assert [m["id"] for m in models["data"]] == ["fake-model", "judge-model"]
    assert server.request_count == 0  # only chat completions are counted


def test_a_chat_completion_is_schema_valid_with_usage_and_the_same_for_the_same_request(
    server: FakeLLMServer,
) -> None:
    status, first, _ = call(f"{server.url}/chat/completions", chat_body())
    assert status == 200
    content = json.loads(first["choices"][0]["message"]["content"])
    assert content["status"] == "ok" and 1 <= content["count"] <= 3
    assert first["choices"][0]["finish_reason"] == "stop"
    # About four characters a token, at least one: "Be brief." is 2 and "hello" 1; the answer by its length.
    answer = first["choices"][0]["message"]["content"]
    assert first["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": approx_tokens(answer),
        "total_tokens": 3 + approx_tokens(answer),
    }
    _, again, _ = call(f"{server.url}/chat/completions", chat_body())
    assert again["choices"][0]["message"]["content"] == first["choices"][0]["message"]["content"]
    assert server.request_count == 2


def test_scripted_answers_are_keyed_by_prompt_name_then_role_and_consumed_in_order() -> None:
    script: dict[str, list[Any]] = {"moves": [{"status": "ok", "count": 3}], "critic": ["plain text answer"]}
    with FakeLLMServer(script=script) as server:
        headers = {"X-Analyst-Role": "critic", "X-Prompt-Name": "moves"}
        contents = [
            call(f"{server.url}/chat/completions", chat_body(), headers)[1]["choices"][0]["message"][
                "content"
            ]
            for _ in range(3)
        ]
        assert contents[0] == '{"status": "ok", "count": 3}'
        assert contents[1] == "plain text answer"
        assert json.loads(contents[2])["status"] == "ok"  # the script is spent: generated again
        assert [r["role"] for r in server.requests] == ["critic"] * 3


def test_faults_queued_over_http_apply_one_per_matching_request_in_order(server: FakeLLMServer) -> None:
    faults = {"faults": [{"kind": "429", "retry_after": 1}, {"kind": "503"}], "role": "macro"}
    assert call(f"{server.root_url}/_control/faults", faults)[:2] == (200, {"queued": 2})
    macro = {"X-Analyst-Role": "macro"}
    assert call(f"{server.url}/chat/completions", chat_body(), {"X-Analyst-Role": "news"})[0] == 200
    status, body, headers = call(f"{server.url}/chat/completions", chat_body(), macro)
    assert (status, headers["Retry-After"]) == (429, "1")
    assert body["error"]["message"] == "injected fault: HTTP 429"
    assert call(f"{server.url}/chat/completions", chat_body(), macro)[0] == 503
    assert call(f"{server.url}/chat/completions", chat_body(), macro)[0] == 200
    _, log, _ = call(f"{server.root_url}/_control/requests")
    assert log["count"] == 4
    assert [r["fault"] for r in log["requests"]] == [None, "429", "503", None]


def test_invalid_schema_and_length_faults_shape_the_content(server: FakeLLMServer) -> None:
    server.inject("invalid_schema", "length")
    invalid = call(f"{server.url}/chat/completions", chat_body())[1]["choices"][0]
    assert json.loads(invalid["message"]["content"]) == ["not", "it"]
    cut = call(f"{server.url}/chat/completions", chat_body())[1]["choices"][0]
    assert cut["finish_reason"] == "length"
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut["message"]["content"])


def test_a_content_fault_does_not_use_up_a_scripted_answer() -> None:
    with FakeLLMServer(script={"critic": [{"status": "ok", "count": 2}]}) as server:
        server.inject("invalid_schema", role="critic")
        headers = {"X-Analyst-Role": "critic"}
        first = call(f"{server.url}/chat/completions", chat_body(), headers)[1]["choices"][0]["message"][
            "content"
        ]
        second = call(f"{server.url}/chat/completions", chat_body(), headers)[1]["choices"][0]["message"][
            "content"
        ]
        assert (json.loads(first), json.loads(second)) == (["not", "it"], {"status": "ok", "count": 2})


def test_an_unknown_fault_is_refused(server: FakeLLMServer) -> None:
    status, body, _ = call(f"{server.root_url}/_control/faults", {"faults": [{"kind": "explode"}]})
    assert status == 400 and "unknown fault kind" in body["error"]["message"]
    with pytest.raises(ValueError, match="unknown fault kind"):
        server.inject("200")


def test_reset_forgets_faults_and_the_request_log(server: FakeLLMServer) -> None:
    server.inject("500")
    call(f"{server.url}/chat/completions", chat_body())
    assert call(f"{server.root_url}/_control/reset", {})[0] == 200
    assert server.request_count == 0
    assert call(f"{server.url}/chat/completions", chat_body())[0] == 200


def test_a_hanging_request_does_not_keep_the_server_from_stopping() -> None:
    server = FakeLLMServer().start()
    server.inject({"kind": "hang", "seconds": 30})
    outcome: list[BaseException] = []

    def client() -> None:
        try:
            call(f"{server.url}/chat/completions", chat_body())
        except OSError as error:  # the connection is dropped when the server stops
            outcome.append(error)

    waiting = threading.Thread(target=client)
    waiting.start()
    wait_until(lambda: server.request_count > 0)  # the hanging request has arrived
    started = time.monotonic()
    server.stop()
    waiting.join(timeout=5)
    assert time.monotonic() - started < 1
    assert not waiting.is_alive()
    assert len(outcome) == 1


def test_a_script_must_map_names_to_lists_of_answers() -> None:
    assert load_script({"evaluator": [{"score": 1}, "text"]}) == {"evaluator": [{"score": 1}, "text"]}
    with pytest.raises(ValueError, match="must be a list"):
        load_script({"evaluator": {"score": 1}})
    with pytest.raises(ValueError, match="a script is a JSON object"):
        load_script([1, 2])


def raw_call(server: FakeLLMServer, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """One chat-completion request on a fresh connection, the reply's bytes as they came."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        connection.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        return response.status, dict(response.headers), response.read()
    finally:
        connection.close()


def raw_fault(body: bytes, **fields: Any) -> dict[str, Any]:
    return {"kind": "raw", "body_b64": base64.b64encode(body).decode(), **fields}


def test_a_raw_fault_sends_exactly_its_bytes_with_its_status_and_content_type(server: FakeLLMServer) -> None:
    garbage = b'\xff\xfe{"choices": \xc3\x28 [\x00'
    server.inject(
        raw_fault(garbage),
        raw_fault(b"<h1>busy</h1>", status=503, content_type="text/html", headers={"Retry-After": "3"}),
        raw_fault(b"{}", content_type=None),
    )
    status, headers, body = raw_call(server, chat_body())
    assert (status, headers["Content-Type"], body) == (200, "application/json", garbage)
    status, headers, body = raw_call(server, chat_body())
    assert (status, headers["Content-Type"], headers["Retry-After"], body) == (
        503,
        "text/html",
        "3",
        b"<h1>busy</h1>",
    )
    status, headers, body = raw_call(server, chat_body())
    assert (status, "Content-Type" in headers, body) == (200, False, b"{}")
    assert [r["fault"] for r in server.requests] == ["raw"] * 3


def test_a_raw_fault_with_a_status_that_carries_no_body_closes_the_connection(server: FakeLLMServer) -> None:
    server.inject(raw_fault(b"stray bytes", status=204))
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.request("POST", "/v1/chat/completions", json.dumps(chat_body()))
    response = connection.getresponse()
    assert (response.status, response.headers["Connection"], response.read()) == (204, "close", b"")
    connection.close()
    assert call(f"{server.url}/chat/completions", chat_body())[0] == 200  # the next reply is clean


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "raw"},
        {"kind": "raw", "body_b64": "not base64!"},
        {"kind": "raw", "body_b64": "", "status": 100},
        {"kind": "raw", "body_b64": "", "status": 600},
        {"kind": "raw", "body_b64": "", "status": "200"},
        {"kind": "raw", "body_b64": "", "content_type": 7},
        {"kind": "raw", "body_b64": "", "headers": {"X-Count": 1}},
    ],
)
def test_a_raw_fault_with_a_bad_field_is_refused(server: FakeLLMServer, fault: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="raw fault"):
        server.inject(fault)
    status, body, _ = call(f"{server.root_url}/_control/faults", {"faults": [fault]})
    assert status == 400 and "raw fault" in body["error"]["message"]


def wait_until(condition: Callable[[], bool], timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for the fake server"
        time.sleep(0.005)


def test_each_request_is_logged_with_its_body_hash_and_counted_as_received_and_as_completed(
    server: FakeLLMServer,
) -> None:
    first, second = chat_body("one"), chat_body("two")
    first_hash, second_hash = body_hash(first), body_hash(second)
    assert first_hash == sha256_hex(canonical_json(first)) != second_hash
    server.inject(
        "500",
        "truncated",
        raw_fault(b"{}"),
        {"kind": "hang", "seconds": 0.05},
        "disconnect",
        "invalid_schema",
        "length",
    )
    for _ in range(3):
        raw_call(server, first)
    for _ in range(2):
        with pytest.raises(OSError):  # the server drops the connection without a reply
            raw_call(server, first)
    for _ in range(3):
        assert raw_call(server, first)[0] == 200
    assert raw_call(server, second)[0] == 200
    assert server.received_by_hash == {first_hash: 8, second_hash: 1}
    # Error statuses, cut-off or raw bodies and silence are no answers; content faults and generated ones are.
    assert server.completed_by_hash == {first_hash: 3, second_hash: 1}
    assert [(r["hash"], r["fault"], r["completed"]) for r in server.requests] == [
        (first_hash, "500", False),
        (first_hash, "truncated", False),
        (first_hash, "raw", False),
        (first_hash, "hang", False),
        (first_hash, "disconnect", False),
        (first_hash, "invalid_schema", True),
        (first_hash, "length", True),
        (first_hash, None, True),
        (second_hash, None, True),
    ]
    wait_until(lambda: server.in_flight == 0)
    _, report, _ = call(f"{server.root_url}/_control/requests")
    assert report["received_by_hash"] == server.received_by_hash
    assert report["completed_by_hash"] == server.completed_by_hash
    assert (report["in_flight"], report["requests"][-1]["hash"]) == (0, second_hash)


def test_an_answer_is_counted_completed_by_the_time_its_client_has_read_it(server: FakeLLMServer) -> None:
    body = chat_body()
    for sent in range(1, 31):
        assert call(f"{server.url}/chat/completions", body)[0] == 200
        assert server.completed_by_hash == {body_hash(body): sent}


def test_in_flight_counts_requests_being_handled_and_a_reset_forgets_one_still_in_flight() -> None:
    body = chat_body()
    with FakeLLMServer(latency_ms=300) as server:
        answered: list[int] = []
        waiting = threading.Thread(
            target=lambda: answered.append(call(f"{server.url}/chat/completions", body)[0])
        )
        waiting.start()
        wait_until(lambda: server.in_flight == 1)
        assert (server.received_by_hash, server.completed_by_hash) == ({body_hash(body): 1}, {})
        server.reset()
        assert (server.received_by_hash, server.in_flight) == ({}, 1)
        waiting.join(timeout=5)
        assert answered == [200]
        wait_until(lambda: server.in_flight == 0)
        assert (server.completed_by_hash, server.requests) == ({}, [])


def test_the_server_in_its_own_process_answers_its_script_and_stops_with_its_context() -> None:
    """What bench_run serves from: another interpreter, as a real endpoint is, with the same answers."""
    script: dict[str, list[Any]] = {"moves": [{"status": "ok", "count": 2}]}
    with FakeLLMServerProcess(script=script) as server:
        url = server.url
        status, body, _ = call(f"{url}/chat/completions", chat_body(), {"X-Prompt-Name": "moves"})
        assert status == 200
        assert json.loads(body["choices"][0]["message"]["content"]) == {"status": "ok", "count": 2}
    with pytest.raises(urllib.error.URLError):
        call(f"{url}/chat/completions", chat_body())
