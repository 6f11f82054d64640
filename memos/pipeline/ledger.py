"""The LLM-call ledger over the LLMCall table: the gateway's ``CallLedger`` contract, backed by PostgreSQL.

Because every attempt is a row and the latest "ok" row for a request hash is the cached answer, a run whose
worker died resumes without paying twice, and a rerun with unchanged inputs makes no call at all. A paid
answer must reach its row even if the database restarts while the call is in flight: each write rides out
a lost connection (memos.pipeline.dbretry), and a retried write finds its own row by ``attempt_id`` instead
of recording the attempt twice.
"""

from __future__ import annotations

import uuid
from functools import cache

from django.db import connection
from django.db.models import F, Field, Sum
from django.db.models.functions import Greatest
from django.utils import timezone

from agents.llm.types import LLMCallRecord
from agents.text.storable import storable, storable_text
from memos.models import LLMCall, Run
from memos.pipeline.dbretry import retry_on_lost_connection

_RECORDED = (
    "attempt_id",
    "run",
    "stage",
    "role",
    "prompt_name",
    "prompt_hash",
    "model",
    "base_url",
    "request_hash",
    "attempt",
    "tokens_in",
    "tokens_out",
    "cost",
    "duration_ms",
    "outcome",
    "error",
    "raw_response",
    "parsed",
    "created_at",
)


@cache
def _fields() -> tuple[Field[object, object], ...]:
    return tuple(LLMCall._meta.get_field(name) for name in _RECORDED)  # type: ignore[misc]


@cache
def _cached_sql() -> str:
    """The newest answered attempt at a request: the cached answer (the index on hash and outcome)."""
    quote = connection.ops.quote_name
    calls = quote(LLMCall._meta.db_table)
    # Our own table and column names; the values are parameters.
    return (
        f"SELECT * FROM {calls} WHERE {quote('request_hash')} = %s AND {quote('outcome')} = %s "  # noqa: S608
        f"ORDER BY {quote('created_at')} DESC, {quote('id')} DESC LIMIT 1"
    )


@cache
def _record_sql() -> str:
    """INSERT the row and, only if it was inserted, add its tokens to its run's total and give back the
    tokens its attempt had reserved (the last two parameters)."""
    quote = connection.ops.quote_name
    calls, runs = quote(LLMCall._meta.db_table), quote(Run._meta.db_table)
    columns = ", ".join(quote(field.column or field.attname) for field in _fields())
    values = ", ".join(["%s"] * len(_fields()))
    # Table and column names from our own models; every value is a parameter.
    return (
        f"WITH added AS (INSERT INTO {calls} ({columns}) VALUES ({values}) "  # noqa: S608
        "ON CONFLICT (attempt_id) DO NOTHING RETURNING run_id, tokens_in + tokens_out AS tokens) "
        f"UPDATE {runs} SET tokens_spent = {runs}.tokens_spent + added.tokens, "
        f"tokens_reserved = GREATEST({runs}.tokens_reserved - %s, 0) FROM added "
        f"WHERE {runs}.id = added.run_id AND (added.tokens > 0 OR %s > 0)"
    )


@cache
def _reserve_sql() -> str:
    """Add the tokens to the run's reservation if its spend, its reservations and these fit its budget."""
    quote = connection.ops.quote_name
    runs, reserved, spent = quote(Run._meta.db_table), quote("tokens_reserved"), quote("tokens_spent")
    # Our own table and column names; the values are parameters.
    return (
        f"UPDATE {runs} SET {reserved} = {reserved} + %s "  # noqa: S608
        f"WHERE {quote('id')} = %s AND {spent} <= %s - %s - {reserved}"
    )


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


# Run id -> the budget it started with, for every gateway's ledger in this process.
_budgets: dict[str, int | None] = {}


def remember_budget(run: Run) -> None:
    """Note the budget of a run the driver has just read, so that its first parallel calls do not each read
    it again, one round trip apiece on the path of the first wave."""
    _budgets[str(run.pk)] = run.budget_tokens


class DjangoLedger:
    """Called from the pipeline's thread pool too; each pool thread keeps its own connection for the life of
    the process (memos.pipeline.fanout), so one open connection per thread serves all of its calls."""

    def cached(self, request_hash: str) -> LLMCallRecord | None:
        def read() -> LLMCall | None:
            # Raw SQL: this read is on the path of every call, and the ORM took twice its time to build it.
            return next(iter(LLMCall.objects.raw(_cached_sql(), [request_hash, LLMCall.Outcome.OK])), None)

        row = retry_on_lost_connection(read, what="reading the LLM ledger")
        return _record_from_row(row) if row else None

    def record(self, call: LLMCallRecord, *, released: int = 0) -> None:
        """The attempt's row, the run's running total and the reservation given back, in one statement (one
        round trip, no transaction to open and commit: this is on the path of every call). A write retried
        after a lost connection that had landed after all finds its row by ``attempt_id`` and changes
        nothing."""
        row = LLMCall(
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
            # What a model answered is stored as PostgreSQL takes it (no NUL, no lone surrogate): a paid
            # answer must reach its row, and the same bytes would fail every retry of the write.
            error=storable_text(call.error),
            raw_response=storable_text(call.raw_response),
            parsed=storable(call.parsed),
            created_at=timezone.now(),
        )

        def write() -> None:
            params = [field.get_db_prep_save(getattr(row, field.attname), connection) for field in _fields()]
            params += [released, released]
            with connection.cursor() as cursor:
                cursor.execute(_record_sql(), params)

        retry_on_lost_connection(write, what="recording an LLM call")

    def tokens_spent(self, run_id: str) -> int:
        def read() -> int:
            total = LLMCall.objects.filter(run_id=run_id).aggregate(
                total=Sum(F("tokens_in") + F("tokens_out"))
            )["total"]
            return int(total or 0)

        return retry_on_lost_connection(read, what="reading the run's token spend")

    def budget_of(self, run_id: str, default: int | None) -> int | None:
        """The budget the run recorded when it started (memos.services.runs.start_run), read once per run
        and process (it never changes), or known from the driver's read of the run (``remember_budget``)."""
        if run_id not in _budgets:
            recorded = retry_on_lost_connection(
                lambda: Run.objects.filter(pk=run_id).values_list("budget_tokens", flat=True).first(),
                what="reading the run's token budget",
            )
            _budgets[run_id] = recorded
        found = _budgets[run_id]
        return default if found is None else found

    def reserve(self, run_id: str, tokens: int, budget: int) -> bool:
        # One conditional UPDATE: two calls reserving at once are serialised on the run's row, so the second
        # sees the first's reservation. Raw SQL: it is on the path of every call, and the ORM took longer to
        # build it than the database to run it.
        def write() -> bool:
            with connection.cursor() as cursor:
                cursor.execute(_reserve_sql(), [tokens, uuid.UUID(run_id), budget, tokens])
                return bool(cursor.rowcount)

        return retry_on_lost_connection(write, what="reserving tokens")

    def release(self, run_id: str, tokens: int) -> None:
        retry_on_lost_connection(
            lambda: Run.objects.filter(pk=run_id).update(
                tokens_reserved=Greatest(F("tokens_reserved") - tokens, 0)
            ),
            what="releasing reserved tokens",
        )
