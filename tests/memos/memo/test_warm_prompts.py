"""What ``manage.py warm_model`` sends the model server before any brief: the system text every memo call of
each role begins with, the same for every company, the quick profile's roles first."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memos.models import Run
from memos.pipeline import driver
from memos.pipeline.memo.warm import warm_prompts
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

QUICK_FIRST = ["specialist_fundamentals", "specialist_quant", "specialist_news", "synthesizer", "evaluator"]


def quick_run(ticker: str) -> Run:
    load_desk_data(ticker)
    owner = analyst(f"ana-{ticker.lower()}")
    brief = create_brief(owner=owner, ticker=ticker, question="Is the case intact?")
    return start_run(brief=brief, user=brief.owner, profile="quick", enqueue=False, workflow="memo")


@pytest.mark.django_db(transaction=True)
def test_every_call_of_a_quick_memo_begins_with_its_roles_warm_text() -> None:
    run = quick_run("AAPL")
    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        sent = {entry["prompt_name"]: entry["body"]["messages"][0]["content"] for entry in server.requests}
    warm = {prompt.name: prompt.system for prompt in warm_prompts(run)}
    assert [prompt.name for prompt in warm_prompts(run)][:5] == QUICK_FIRST
    for name in QUICK_FIRST:
        assert sent[name].startswith(warm[name]), name
        assert len(warm[name]) > len(sent[name]) * 0.8  # all of the system text but the fence's line
        # Nothing of a brief or of its fence: the same text begins every company's calls.
        assert run.nonce not in warm[name] and "Is the case intact?" not in warm[name]


@pytest.mark.django_db
def test_the_command_warms_every_memo_role_once_and_stops_for_a_persons_run() -> None:
    with fake_llm() as server:
        out = StringIO()
        call_command("warm_model", stdout=out)
        asked = [entry["prompt_name"].removeprefix("warm:") for entry in server.requests]
        assert asked[:5] == QUICK_FIRST
        assert sorted(asked[5:8]) == ["specialist_competitive", "specialist_macro", "specialist_regulatory"]
        # Then the other workflows', in the registry's order.
        assert asked[8:10] == ["deck_scope", "deck_framing"]
        assert asked[-1] == "screen_director"
        assert "specialist_news (news):" in out.getvalue()
        quick_run("AAPL")  # queued: a person's run is under way
        out = StringIO()
        call_command("warm_model", stdout=out)
        assert server.request_count == len(asked)
        assert "nothing warmed" in out.getvalue()
