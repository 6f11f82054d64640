"""Tests of agents.data. They read the real files in ../shared/data (described in its PROVENANCE.md)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
SNAPSHOT = REPO_ROOT / "data" / "snapshot"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data; the test fails (not skips) when the real data is missing."""
    path = SHARED_DATA / relative
    if not path.is_file():
        pytest.fail(f"real-data file {path} is missing; tests read it from ../shared/data")
    return path
