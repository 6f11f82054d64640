"""``manage.py fake_llm --port N [--latency-ms L] [--script file.json]``: the fake LLM server, foreground.

Point the app at it with ``LLM_BASE_URL=http://127.0.0.1:N/v1``. Ctrl-C (SIGINT) or SIGTERM stops it.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.llm.fakes.server import FakeLLMServer, load_script
from memos.pipeline.registry import fake_answers

DEFAULT_PORT = 8090


class Command(BaseCommand):
    help = "Run the fake OpenAI-compatible LLM server on 127.0.0.1 until Ctrl-C or SIGTERM."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
        parser.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every request")
        parser.add_argument("--script", type=Path, help='JSON file: {"role or prompt name": [answers...]}')

    def handle(self, *args: Any, **options: Any) -> None:
        script = _read_script(options["script"]) if options["script"] else {}
        if options["latency_ms"] < 0:
            raise CommandError("--latency-ms must not be negative")
        server = FakeLLMServer(
            port=options["port"], latency_ms=options["latency_ms"], script=script, answers=fake_answers()
        )
        try:
            server.start()
        except OSError as exc:
            raise CommandError(f"cannot listen on 127.0.0.1:{options['port']}: {exc}") from exc

        stop = threading.Event()

        def request_stop(signum: int, frame: FrameType | None) -> None:
            stop.set()

        previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.stdout.write(f"fake LLM server listening on {server.url} (Ctrl-C to stop)")
            self.stdout.flush()
            while not stop.wait(timeout=0.5):
                pass
        finally:
            server.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self.stdout.write(f"fake LLM server stopped after {server.request_count} chat request(s)")


def _read_script(path: Path) -> dict[str, list[Any]]:
    try:
        return load_script(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise CommandError(f"--script {path}: {exc}") from exc
