"""manage.py llm_ping and fake_llm, against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import ALL_ROLES
from memos.pipeline.registry import fake_answers

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(answers=fake_answers()) as running:
        yield running


def settings_for(base_url: str, **overrides: object) -> LLMSettings:
    default = Endpoint(base_url=base_url, api_key="sk-never-printed", model="fake-model")
    values: dict[str, object] = {
        "default": default,
        "timeout_s": 2.0,
        "max_retries": 1,
        "loopback_only": True,
    }
    return LLMSettings.model_validate(values | overrides)


def ping(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("llm_ping", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_llm_ping_lists_every_role_and_calls_each_distinct_endpoint_once(server: FakeLLMServer) -> None:
    judge = Endpoint(base_url=server.url, api_key="sk-judge-never-printed", model="judge-model")
    with override_settings(LLM_SETTINGS=settings_for(server.url, roles={"evaluator": judge})):
        out, err = ping()
    lines = out.splitlines()
    for role in ALL_ROLES:
        assert any(
            line.split()[:3]
            == [role, server.url, "model=judge-model" if role == "evaluator" else "model=fake-model"]
            for line in lines
        )
    assert len([line for line in lines if line.startswith("ok ")]) == 2
    assert "answer: status=ok" in out
    assert "never-printed" not in out + err
    assert err == ""
    assert sorted(r["model"] for r in server.requests) == ["fake-model", "judge-model"]
    assert {r["prompt_name"] for r in server.requests} == {"llm_ping"}


def test_llm_ping_for_one_role_checks_only_that_role(server: FakeLLMServer) -> None:
    with override_settings(LLM_SETTINGS=settings_for(server.url)):
        out, _ = ping("--role", "evaluator")
    assert out.splitlines()[0].split()[0] == "evaluator"
    assert len(out.splitlines()) == 2
    assert [r["role"] for r in server.requests] == ["evaluator"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_llm_ping_exits_1_with_one_clear_line_when_the_endpoint_is_unreachable() -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    err = StringIO()
    with (
        override_settings(LLM_SETTINGS=settings_for(dead, max_retries=0)),
        pytest.raises(SystemExit) as exited,
    ):
        call_command("llm_ping", "--role", "macro", stdout=StringIO(), stderr=err)
    assert exited.value.code == 1
    [line] = err.getvalue().strip().splitlines()
    assert line.startswith(f"llm_ping: {dead} (model fake-model) failed:")
    assert "connection failed" in line


def test_llm_ping_refuses_a_hosted_endpoint_when_loopback_only() -> None:
    hosted = settings_for("https://api.openai.com/v1", max_retries=0)
    err = StringIO()
    with override_settings(LLM_SETTINGS=hosted), pytest.raises(SystemExit) as exited:
        call_command("llm_ping", "--role", "news", stdout=StringIO(), stderr=err)
    assert exited.value.code == 1
    assert "LLM_LOOPBACK_ONLY" in err.getvalue()


def read_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    assert ready, "fake_llm printed nothing in time"
    return process.stdout.readline()


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_fake_llm_serves_its_script_until_a_signal_stops_it(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"evaluator": [{"verdict": "scripted"}]}))
    command = [
        sys.executable,
        "manage.py",
        "fake_llm",
        "--port",
        "0",
        "--latency-ms",
        "1",
        "--script",
        str(script),
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = read_line(process, timeout_s=20)
        url = banner.split()[-4]
        assert banner.startswith("fake LLM server listening on http://127.0.0.1:") and url.endswith("/v1")
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Analyst-Role": "evaluator"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            answer = json.loads(response.read())
        assert answer["choices"][0]["message"]["content"] == '{"verdict": "scripted"}'
        process.send_signal(stop_signal)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "stopped after 1 chat request(s)" in out


def test_fake_llm_rejects_a_malformed_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"evaluator": {"not": "a list"}}')
    with pytest.raises(CommandError, match="must be a list"):
        call_command("fake_llm", "--port", "0", "--script", str(script))
