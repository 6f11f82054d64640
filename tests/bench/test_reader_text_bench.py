"""Reader text on a hosted-style endpoint: the fake server answering like a model that ignores the prose
pattern (an endpoint without constrained decoding), so its writers type figures the way models do.

The synthesizer copies figures from its evidence list at the desk's rounding and at a coarser one, types
two figures no fact backs and repeats a sentence; the deck's drafter types one figure a slide's figure backs
and one that none does. The re-asks are answered by the fake server from their schema (plain words, which
code accepts). The report prints what ``manage.py reader_report`` prints for the embedded model
(``scripts/reader-bench.sh``), so the two tables read alike. 200 ms of latency per call, as a hosted
endpoint answers.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings

from agents.deck.fakes import deck_answer
from agents.llm.fakes.server import FakeLLMServer
from memos.models import Run
from memos.pipeline import driver
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief, start_run
from tests.bench.conftest import BenchReport
from tests.memos.deck_support import deck_run, deck_settings
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]

LATENCY_MS = 200
FACT_LINE = re.compile(r"^- (\w+):(\w+):FY(\d{4}) \[\w+\] USD ([\d,]+) M", re.MULTILINE)
FIGURE_LINE = re.compile(r"^- (\w+):(\w+):FY(\d{4}): [^\n]*?USD ([\d,]+) M", re.MULTILINE)


def _user_text(messages: Any) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def _typing_synthesizer(answer: dict[str, Any]) -> Any:
    def write(schema: dict[str, Any], messages: Any) -> dict[str, Any]:
        copied = FACT_LINE.findall(_user_text(messages))
        amounts = [(metric, year, Decimal(value.replace(",", ""))) for _, metric, year, value in copied]
        first = amounts[0] if amounts else ("revenue", "2025", Decimal(0))
        second = amounts[1] if len(amounts) > 1 else first
        name = first[0].replace("_", " ")
        macro = (
            f"The {name} reached USD {first[2]:,.0f} million in {first[1]}. Services grew 14% a year. "
            "Services grew 14% a year."
        )
        meso = f"The {second[0].replace('_', ' ')} was about ${second[2] / 1000:,.1f} billion in {second[1]}."
        thesis = "Hold while margins expand 35bps a year."
        memo = answer["memo"] | {"headline_thesis": thesis}
        return answer | {"analysis": answer["analysis"] | {"macro": macro, "meso": meso}, "memo": memo}

    return write


def _typing_drafter(schema: dict[str, Any], messages: Any) -> Any:
    drafted = deck_answer("drafter", schema, messages)
    lines = FIGURE_LINE.findall(_user_text(messages))
    if not isinstance(drafted, dict) or not drafted.get("bullets") or not lines:
        return drafted
    _, metric, year, value = lines[0]
    bullet = drafted["bullets"][0]
    name = metric.replace("_", " ")
    typed = f"The {name} came to USD {value} million in FY{year}. Demand rose 9% on the quarter."
    return drafted | {"bullets": [bullet | {"text": typed}, *drafted["bullets"][1:]]}


def test_bench_reader_text_hosted_style(
    bench_report: BenchReport, capsys: pytest.CaptureFixture[str]
) -> None:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(
        owner=user, ticker="AAPL", question="Is the position worth holding over the next year?"
    )
    memo = start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")
    script = script_for(memo)
    script["synthesizer"] = [_typing_synthesizer(answer) for answer in script["synthesizer"]]
    with fake_llm(script, latency_ms=LATENCY_MS):
        driver.run_inline(str(memo.pk))
    deck = deck_run("quick", user=user)
    drafter = {"deck_drafter": [_typing_drafter] * 12}
    with (
        FakeLLMServer(latency_ms=LATENCY_MS, script=drafter, answers=fake_answers()) as server,
        override_settings(LLM_SETTINGS=deck_settings(server)),
    ):
        driver.run_inline(str(deck.pk))
    capsys.readouterr()
    call_command("reader_report", str(memo.pk), str(deck.pk))
    table = capsys.readouterr().out
    for run in (memo, deck):
        run.refresh_from_db()
        assert run.status in {Run.Status.DONE, Run.Status.NEEDS_REVIEW}, run.status_message
    print("\n" + "\n".join(f"[bench] {line}" for line in table.splitlines()))
    bench_report.add("reader text, hosted-style (fake server, 200 ms a call)", table=table.splitlines())
