"""The embedded default, end to end: llama-server with the bundled 0.5B model, the real ``openai`` client,
a schema-valid structured answer. Run by ``scripts/test.sh`` as ``pytest -m local_model``; it needs
``ADESK_LLAMA_SERVER`` and ``ADESK_TEST_MODEL``, which that script exports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agents.llm.config import load_llm_settings
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.prompts import PromptTemplate, load_prompt
from agents.llm.types import CallContext
from tests.conftest import ROOT

pytestmark = pytest.mark.local_model


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    binary, model = os.environ.get("ADESK_LLAMA_SERVER", ""), os.environ.get("ADESK_TEST_MODEL", "")
    if not (binary and Path(binary).is_file() and model and Path(model).is_file()):
        pytest.fail(
            "ADESK_LLAMA_SERVER and ADESK_TEST_MODEL must name the built server and model (scripts/test.sh)"
        )
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    with log.open("w") as log_file:
        # The same flags scripts/lib.sh start_llama uses for the app.
        server = subprocess.Popen(
            [
                binary,
                "-m",
                model,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "-np",
                "3",
                "-c",
                "24576",
                "-t",
                "2",
                "--alias",
                "local",
                "--offline",
                "--no-webui",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama-server did not become healthy:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


class Headline(BaseModel):
    """A small structured answer with an enum, a bounded list and a bounded string."""

    model_config = ConfigDict(extra="forbid")

    sentiment: Literal["positive", "negative", "neutral"]
    topics: list[str] = Field(min_length=1, max_length=3)
    summary: str = Field(min_length=1, max_length=120)


@pytest.fixture(scope="module")
def template() -> PromptTemplate:
    return load_prompt(Path(__file__).with_name("headline_check.md"), schemas={"Headline": Headline})


def test_the_embedded_model_answers_a_schema_constrained_request_through_the_gateway(
    llama_port: int, template: PromptTemplate
) -> None:
    env = {"LOCAL_LLM_PORT": str(llama_port), "LLM_LOOPBACK_ONLY": "true"}
    settings = load_llm_settings(env)  # the embedded default: no LLM_BASE_URL, the local alias
    ledger = InMemoryLedger()
    with LLMGateway(settings, ledger, ThreadLimiter(settings.max_concurrency)) as gateway:
        answer = gateway.complete(
            template.render(), Headline, context=CallContext(stage="check", role="news")
        )
        again = gateway.complete(template.render(), Headline, context=CallContext(stage="check", role="news"))

    assert isinstance(answer, Headline) and answer.sentiment in {"positive", "negative", "neutral"}
    assert again == answer  # the second, identical request is served from the ledger
    outcomes = [record.outcome for record in ledger.records]
    assert outcomes == ["ok", "cached"]
    assert ledger.records[0].tokens_out > 0


def test_llm_ping_reports_the_local_endpoint_and_a_valid_answer(llama_port: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_BASE_URL")}
    env.update(LOCAL_LLM_PORT=str(llama_port))
    done = subprocess.run(
        [sys.executable, "manage.py", "llm_ping", "--role", "synthesizer"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"http://127.0.0.1:{llama_port}/v1" in done.stdout
    assert "answer: status=ok" in done.stdout
