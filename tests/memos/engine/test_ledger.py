from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.llm.types import LLMCallRecord
from memos.models import LLMCall, Run
from memos.pipeline.ledger import DjangoLedger, remember_budget
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db


def record(run_id: str | None, request_hash: str, outcome: str, tokens: int = 10) -> LLMCallRecord:
    return LLMCallRecord(
        run_id=run_id,
        stage="specialists",
        role="fundamentals",
        prompt_name="fundamentals",
        prompt_hash="p" * 64,
        model="local",
        base_url="http://127.0.0.1:8081/v1",
        request_hash=request_hash,
        attempt=1,
        tokens_in=tokens,
        tokens_out=tokens,
        cost=Decimal("0.001"),
        duration_ms=120,
        outcome=outcome,
        raw_response='{"ok": true}',
        parsed={"ok": True} if outcome == "ok" else None,
    )


def test_only_a_successful_answer_is_served_from_the_cache(alice: User) -> None:
    run = run_for(alice)
    ledger = DjangoLedger()
    ledger.record(record(str(run.id), "h1", "error"))
    assert ledger.cached("h1") is None
    ledger.record(record(str(run.id), "h1", "ok"))
    cached = ledger.cached("h1")
    assert cached is not None
    assert cached.parsed == {"ok": True}
    assert cached.run_id == str(run.id)


def test_tokens_spent_counts_every_attempt_of_the_run(alice: User) -> None:
    run = run_for(alice)
    ledger = DjangoLedger()
    ledger.record(record(str(run.id), "h1", "invalid", tokens=5))
    ledger.record(record(str(run.id), "h2", "ok", tokens=7))
    ledger.record(record(None, "h3", "ok", tokens=100))
    assert ledger.tokens_spent(str(run.id)) == 24
    assert Run.objects.get(pk=run.pk).tokens_spent == 24
    assert LLMCall.objects.count() == 3


def test_an_answer_whose_body_carries_nul_characters_is_recorded_without_them(alice: User) -> None:
    run = run_for(alice)
    ledger = DjangoLedger()
    answer = record(str(run.id), "h1", "invalid").model_copy(
        update={"raw_response": '{"text": "\x00\x00"}', "error": "text: \x00 is not allowed\ud800"}
    )
    ledger.record(answer)
    row = LLMCall.objects.get(run=run)
    assert (row.raw_response, row.error) == ('{"text": ""}', "text:  is not allowed")


def test_a_budget_the_driver_read_is_not_read_again_by_the_first_calls(
    alice: User, django_assert_num_queries: Callable[..., Any]
) -> None:
    # The first wave of parallel calls each read the budget (one round trip apiece on its path) until the
    # driver's read of the run was noted.
    read = run_for(alice)
    noted = run_for(alice, read.brief.company)
    Run.objects.filter(pk__in=[read.pk, noted.pk]).update(budget_tokens=5_000)
    with django_assert_num_queries(1):
        assert DjangoLedger().budget_of(str(read.pk), 100) == 5_000
    remember_budget(Run.objects.get(pk=noted.pk))
    with django_assert_num_queries(0):
        assert DjangoLedger().budget_of(str(noted.pk), 100) == 5_000


def test_a_reservation_is_made_only_while_the_spend_and_every_reservation_fit_the_budget(alice: User) -> None:
    run = run_for(alice)
    ledger = DjangoLedger()
    ledger.record(record(str(run.id), "h1", "ok", tokens=10))  # 20 tokens spent
    assert ledger.reserve(str(run.id), 50, 100)
    assert not ledger.reserve(str(run.id), 31, 100)  # 20 + 50 + 31 > 100
    assert ledger.reserve(str(run.id), 30, 100)  # exactly the budget
    assert Run.objects.get(pk=run.pk).tokens_reserved == 80
    ledger.release(str(run.id), 50)
    assert ledger.reserve(str(run.id), 31, 100)
