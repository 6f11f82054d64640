"""The fake OpenAI-compatible server over plain HTTP: routes, control endpoints, scripts and faults."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from agents.llm.fakes.server import FakeLLMServer, load_script

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
    usage = first["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
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
    while server.request_count == 0:
        time.sleep(0.01)
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
