"""Fixtures the desk's tests share across packages."""

from __future__ import annotations

import pytest
from pytest_django import DjangoDbBlocker

from tests.memos.deck_support import FinishedSnapshot, finished_deck_snapshot


@pytest.fixture(scope="module")
def finished_deck_rows(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> FinishedSnapshot:
    """A quick deck run finished on the fake LLM, built once per module (``restored_deck`` puts it back)."""
    with django_db_blocker.unblock():
        return finished_deck_snapshot("quick")
