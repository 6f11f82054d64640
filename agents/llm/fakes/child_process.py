"""The fake OpenAI-compatible server in a process of its own: ``with FakeLLMServerProcess(...) as s: s.url``.

A real endpoint never shares the engine's interpreter. The threaded ``FakeLLMServer`` does: parsing each
request and writing each answer takes the GIL from the pipeline's threads, so a benchmark that serves its
calls in-process counts the fake server's work as the engine's. This one serves the same answers from a
fresh interpreter (``python -m agents.llm.fakes.child_process``: no inherited threads, connections or
locks, and no re-import of the caller's main module), so a benchmark measures what the pipeline adds to an
endpoint's latency.

The parent writes ``{"latency_ms": ..., "script": ..., "answers": [module, ...]}`` as one JSON line to the
child's stdin; the child answers with its base URL on stdout and serves until its stdin closes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from agents.llm.fakes.server import FakeLLMServer

STOP_TIMEOUT_S = 10.0
PROJECT_ROOT = Path(__file__).resolve().parents[3]


class FakeLLMServerProcess:
    def __init__(
        self,
        latency_ms: float = 0,
        script: Mapping[str, Sequence[Any]] | None = None,
        *,
        answers: Sequence[str] = (),
    ) -> None:
        self._latency_ms = latency_ms
        self._answers = list(answers)
        self._script = {key: list(answers) for key, answers in (script or {}).items()}
        self._process: subprocess.Popen[str] | None = None
        self._url = ""

    def start(self) -> Self:
        process = subprocess.Popen(  # this interpreter, a module of ours, no shell
            [sys.executable, "-m", "agents.llm.fakes.child_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=PROJECT_ROOT,  # where ``agents`` is importable, wherever the caller runs from
        )
        self._process = process
        stdin, stdout = _pipe(process.stdin), _pipe(process.stdout)
        setup = {"latency_ms": self._latency_ms, "script": self._script, "answers": self._answers}
        stdin.write(json.dumps(setup) + "\n")
        stdin.flush()
        url = stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError("the fake LLM server process did not start (see its output above)")
        self._url = url
        return self

    def stop(self) -> None:
        process, self._process, self._url = self._process, None, ""
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the child's signal to stop
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()  # this object's own child, by its handle
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    @property
    def url(self) -> str:
        """The base URL for an OpenAI client (``.../v1``)."""
        if not self._url:
            raise RuntimeError("the fake LLM server process is not running")
        return self._url

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _pipe(stream: IO[str] | None) -> IO[str]:
    if stream is None:
        raise RuntimeError("the fake LLM server process has no pipe")
    return stream


def main() -> None:
    setup = json.loads(sys.stdin.readline())
    latency_ms, script, answers = float(setup["latency_ms"]), setup["script"], setup.get("answers", [])
    with FakeLLMServer(latency_ms=latency_ms, script=script, answers=answers) as server:
        sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the parent closes it


if __name__ == "__main__":
    main()
