"""A workflow's settings changed for a test (memos.pipeline.workflow_settings), as a context manager or a
decorator: ``with changed("memos.pipeline.screen", schedule="fri 21:30"):``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.test import override_settings


@contextmanager
def changed(package: str, **changes: Any) -> Iterator[None]:
    current = settings.WORKFLOW_SETTINGS[package]
    found = {**settings.WORKFLOW_SETTINGS, package: replace(current, **changes)}  # type: ignore[type-var]
    with override_settings(WORKFLOW_SETTINGS=found):
        yield
