"""The LLM-call ledger over the LLMCall table: the gateway's ``CallLedger`` contract, backed by PostgreSQL.

Because every attempt is a row and the latest "ok" row for a request hash is the cached answer, a run whose
worker died resumes without paying twice, and a rerun with unchanged inputs makes no call at all. A paid
answer must reach its row even if the database restarts while the call is in flight: each write rides out
a lost connection (memos.pipeline.dbretry), and a retried write finds its own row by ``attempt_id`` instead
of recording the attempt twice.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, Sum
from django.db.models.functions import Greatest

from agents.llm.types import LLMCallRecord
from memos.models import LLMCall, Run
from memos.pipeline.dbretry import retry_on_lost_connection


def _record_from_row(row: LLMCall) -> LLMCallRecord:
    return LLMCallRecord(
        attempt_id=row.attempt_id.hex if row.attempt_id else "",
        run_id=str(row.run_id) if row.run_id else None,
        stage=row.stage,
        role=row.role,
        prompt_name=row.prompt_name,
        prompt_hash=row.prompt_hash,
        model=row.model,
        base_url=row.base_url,
        request_hash=row.request_hash,
        attempt=row.attempt,
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        cost=row.cost,
        duration_ms=row.duration_ms,
        outcome=row.outcome,
        error=row.error,
        raw_response=row.raw_response,
        parsed=row.parsed,
        created_at=row.created_at,
    )


class DjangoLedger:
    """Called from the pipeline's thread pool too; each pool thread keeps its own connection for the life of
    the process (memos.pipeline.fanout), so one open connection per thread serves all of its calls."""

    def cached(self, request_hash: str) -> LLMCallRecord | None:
        def read() -> LLMCall | None:
            return (
                LLMCall.objects.filter(request_hash=request_hash, outcome=LLMCall.Outcome.OK)
                .order_by("-created_at", "-id")
                .first()
            )

        row = retry_on_lost_connection(read, what="reading the LLM ledger")
        return _record_from_row(row) if row else None

    def record(self, call: LLMCallRecord) -> None:
        tries = 0

        def write() -> None:
            nonlocal tries
            tries += 1
            self._record_once(call, retried=tries > 1)

        retry_on_lost_connection(write, what="recording an LLM call")

    def _record_once(self, call: LLMCallRecord, *, retried: bool) -> None:
        with transaction.atomic():
            # Only a retry can find its row: an earlier try may have committed before its connection was lost.
            if retried and LLMCall.objects.filter(attempt_id=call.attempt_id).exists():
                return
            LLMCall.objects.create(
                attempt_id=call.attempt_id,
                run_id=call.run_id,
                stage=call.stage,
                role=call.role,
                prompt_name=call.prompt_name,
                prompt_hash=call.prompt_hash,
                model=call.model,
                base_url=call.base_url,
                request_hash=call.request_hash,
                attempt=call.attempt,
                tokens_in=call.tokens_in,
                tokens_out=call.tokens_out,
                cost=call.cost,
                duration_ms=call.duration_ms,
                outcome=call.outcome,
                error=call.error,
                raw_response=call.raw_response,
                parsed=call.parsed,
            )
            if call.run_id and (call.tokens_in or call.tokens_out):
                # A running total for pages and lists; the ledger rows remain the truth (tokens_spent).
                Run.objects.filter(pk=call.run_id).update(
                    tokens_spent=F("tokens_spent") + call.tokens_in + call.tokens_out
                )

    def tokens_spent(self, run_id: str) -> int:
        def read() -> int:
            total = LLMCall.objects.filter(run_id=run_id).aggregate(
                total=Sum(F("tokens_in") + F("tokens_out"))
            )["total"]
            return int(total or 0)

        return retry_on_lost_connection(read, what="reading the run's token spend")

    def reserve(self, run_id: str, tokens: int, budget: int) -> bool:
        # One conditional UPDATE: two calls reserving at once are serialised on the run's row, so the second
        # sees the first's reservation.
        def write() -> bool:
            return bool(
                Run.objects.filter(
                    pk=run_id, tokens_spent__lte=budget - tokens - F("tokens_reserved")
                ).update(tokens_reserved=F("tokens_reserved") + tokens)
            )

        return retry_on_lost_connection(write, what="reserving tokens")

    def release(self, run_id: str, tokens: int) -> None:
        retry_on_lost_connection(
            lambda: Run.objects.filter(pk=run_id).update(
                tokens_reserved=Greatest(F("tokens_reserved") - tokens, 0)
            ),
            what="releasing reserved tokens",
        )
