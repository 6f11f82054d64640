"""Benchmarks report numbers; they never assert timings. ``scripts/bench.sh`` runs them (``-m bench``)."""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

RESULTS = ROOT / "var" / "bench" / "results.json"


class BenchReport:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def add(self, name: str, **numbers: Any) -> None:
        self.rows[name] = numbers
        print(f"\n[bench] {name}: " + ", ".join(f"{key}={value}" for key, value in numbers.items()))


@pytest.fixture(scope="session")
def bench_report() -> Iterator[BenchReport]:
    report = BenchReport()
    yield report
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": _cpus()}
    Path(RESULTS).write_text(json.dumps({"machine": machine, "results": report.rows}, indent=2) + "\n")
    print(f"\n[bench] results written to {RESULTS}")


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))
