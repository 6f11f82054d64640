"""A run's ledger page: every call, its outcome and tokens, and the speeds the endpoint reported."""

from __future__ import annotations

import json
import re

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.html import strip_tags

from memos.models import LLMCall, Run
from tests.memos.factories import ledger_row, run_for

TIMED = {
    "choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
    "timings": {
        "cache_n": 900,
        "prompt_n": 1600,
        "prompt_ms": 20000.0,
        "predicted_n": 300,
        "predicted_ms": 25000.0,
    },
}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", strip_tags(html))


def _calls(run: Run, n: int) -> None:
    for _ in range(n):
        ledger_row(run, raw_response=json.dumps(TIMED))
    LLMCall.objects.filter(run=run).update(tokens_in=1600, tokens_out=300, duration_ms=45000)


def test_the_ledger_shows_each_calls_prompt_and_generation_speed(client: Client, alice: User) -> None:
    run = run_for(alice)
    _calls(run, 2)
    cached = ledger_row(run, raw_response=json.dumps(TIMED))
    LLMCall.objects.filter(pk=cached.pk).update(outcome=LLMCall.Outcome.CACHED)
    client.force_login(alice)
    page = _text(client.get(f"/runs/{run.pk}/ledger/").content.decode())
    assert "2 calls sent, 1 answered from the ledger at no cost" in page
    assert "3200 tokens in, 600 out" in page
    assert "prompt 80.0 tokens/s, generation 12.0 tokens/s, 1800 prompt tokens reused" in page
    # Each paid call's row and the total; a cached row was not timed (its body is the first call's).
    assert page.count("80.0") == 2 + 1


def test_calls_without_timings_show_no_speeds(client: Client, alice: User) -> None:
    run = run_for(alice)
    ledger_row(run, raw_response='{"choices": [], "timings": "not an object"}')
    client.force_login(alice)
    page = _text(client.get(f"/runs/{run.pk}/ledger/").content.decode())
    assert "1 call sent" in page and "tokens/s," not in page


def test_the_ledger_is_refused_to_whoever_may_not_see_the_run(
    client: Client, alice: User, charlie: User
) -> None:
    run = run_for(alice)
    client.force_login(charlie)
    assert client.get(f"/runs/{run.pk}/ledger/").status_code == 404


def test_the_ledger_costs_the_same_queries_for_2_calls_as_for_40(client: Client, alice: User) -> None:
    small = run_for(alice)
    large = run_for(alice, small.brief.company)
    _calls(small, 2)
    _calls(large, 40)
    client.force_login(alice)
    counts = []
    for run in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/runs/{run.pk}/ledger/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
