"""A print server for a test: forked from the test's process, whose own WeasyPrint is made to fail."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agents.render import pdf, print_server
from agents.render.print_server import PrintServer


@contextmanager
def printing_elsewhere(monkeypatch: pytest.MonkeyPatch) -> Iterator[PrintServer]:
    """A print server forked here (pytest's threads run beside it; the server only prints), and this
    process's WeasyPrint replaced by one that raises: whatever is printed meanwhile, the server printed."""
    server = print_server.start(only_thread=False)
    assert server is not None

    def not_here(*_: object, **__: object) -> None:
        raise AssertionError("printed in the asking process")

    monkeypatch.setattr(pdf, "html_to_pdf", not_here)  # after the fork: the server keeps the real one
    try:
        yield server
    finally:
        print_server.stop()
        os.waitpid(server.pid, 0)
