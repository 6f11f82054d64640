"""The in-memory ledger keeps the CallLedger contract the Django ledger also keeps."""

from __future__ import annotations

import threading
from typing import get_args

from agents.llm.ledger import CallLedger, InMemoryLedger
from agents.llm.types import LLMCallRecord, Outcome


def row(
    request_hash: str, outcome: Outcome, *, run_id: str | None = "run-1", tokens: int = 10
) -> LLMCallRecord:
    return LLMCallRecord(
        run_id=run_id,
        stage="specialists",
        role="macro",
        prompt_name="macro",
        prompt_hash="p" * 64,
        model="local",
        base_url="http://127.0.0.1:8081/v1",
        request_hash=request_hash,
        attempt=1,
        tokens_in=tokens,
        tokens_out=tokens,
        outcome=outcome,
        parsed={"answer": request_hash} if outcome == "ok" else None,
    )


def test_only_the_latest_ok_record_is_the_cached_answer() -> None:
    ledger: CallLedger = InMemoryLedger()
    ledger.record(row("h1", "invalid"))
    assert ledger.cached("h1") is None
    first, second = row("h1", "ok"), row("h1", "ok")
    ledger.record(first)
    ledger.record(second)
    ledger.record(row("h1", "cached"))
    assert ledger.cached("h1") is second
    assert ledger.cached("h2") is None


def test_tokens_spent_sums_every_outcome_of_the_run_only() -> None:
    ledger = InMemoryLedger()
    for outcome in get_args(Outcome):
        ledger.record(row("h", outcome, tokens=3))
    ledger.record(row("h", "ok", run_id="run-2", tokens=100))
    ledger.record(row("h", "ok", run_id=None, tokens=100))
    assert ledger.tokens_spent("run-1") == 6 * len(get_args(Outcome))
    assert ledger.tokens_spent("run-3") == 0


def test_records_from_many_threads_are_all_kept() -> None:
    ledger = InMemoryLedger()

    def write_many() -> None:
        for _ in range(200):
            ledger.record(row("h", "ok"))

    threads = [threading.Thread(target=write_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ledger.records) == 1600
    assert ledger.tokens_spent("run-1") == 1600 * 20
