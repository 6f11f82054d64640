"""The call ledger: every attempt is a row, and the latest "ok" row for a request hash is its cached answer.

``CallLedger`` is the whole contract; ``memos/pipeline/ledger.py`` implements it over the ``LLMCall`` table.
"""

from __future__ import annotations

import threading
from typing import Protocol

from agents.llm.types import LLMCallRecord


class CallLedger(Protocol):
    def cached(self, request_hash: str) -> LLMCallRecord | None:
        """The most recent record with outcome "ok" for this request hash, if any."""
        ...

    def record(self, call: LLMCallRecord, *, released: int = 0) -> None:
        """Add the attempt's row (its tokens count as spent), giving back ``released`` tokens of its run's
        reservation in the same write."""
        ...

    def tokens_spent(self, run_id: str) -> int:
        """Tokens in plus tokens out over every record of the run, whatever its outcome."""
        ...

    def budget_of(self, run_id: str, default: int | None) -> int | None:
        """The run's own token budget (the one it started with: a later change of the setting does not move
        it), or ``default`` for a run that recorded none."""
        ...

    def reserve(self, run_id: str, tokens: int, budget: int) -> bool:
        """Atomically set ``tokens`` aside for a call of the run if they fit ``budget`` beside the rest."""
        ...

    def release(self, run_id: str, tokens: int) -> None:
        """Give back a reservation once its call is over (its actual tokens are then recorded as spent)."""
        ...


class InMemoryLedger:
    """A thread-safe ledger for tests, commands and benchmarks; forgotten when the process ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[LLMCallRecord] = []
        self._reserved: dict[str, int] = {}

    def cached(self, request_hash: str) -> LLMCallRecord | None:
        with self._lock:
            for call in reversed(self._records):
                if call.request_hash == request_hash and call.outcome == "ok":
                    return call
        return None

    def record(self, call: LLMCallRecord, *, released: int = 0) -> None:
        with self._lock:
            self._records.append(call)
            if released and call.run_id is not None:
                self._reserved[call.run_id] = max(0, self._reserved.get(call.run_id, 0) - released)

    def tokens_spent(self, run_id: str) -> int:
        with self._lock:
            return sum(c.tokens_in + c.tokens_out for c in self._records if c.run_id == run_id)

    def budget_of(self, run_id: str, default: int | None) -> int | None:
        return default  # runs here are ids only: they record no budget of their own

    def reserve(self, run_id: str, tokens: int, budget: int) -> bool:
        with self._lock:
            spent = sum(c.tokens_in + c.tokens_out for c in self._records if c.run_id == run_id)
            if spent + self._reserved.get(run_id, 0) + tokens > budget:
                return False
            self._reserved[run_id] = self._reserved.get(run_id, 0) + tokens
            return True

    def release(self, run_id: str, tokens: int) -> None:
        with self._lock:
            self._reserved[run_id] = max(0, self._reserved.get(run_id, 0) - tokens)

    def reserved(self, run_id: str) -> int:
        """The tokens the run's calls in flight have set aside."""
        with self._lock:
            return self._reserved.get(run_id, 0)

    @property
    def records(self) -> list[LLMCallRecord]:
        with self._lock:
            return list(self._records)
