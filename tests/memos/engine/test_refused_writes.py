"""What PostgreSQL refuses never stops a run; a write it refuses anyway fails the run at once, in words.

A NUL character in text read back from a file (a PDF's undrawn glyphs, a feed's document) is stored without
it: jsonb refuses "\\u0000" and text refuses NUL, and the same write would be refused on every attempt. A
stage whose write is refused for its data fails the run at once instead of being resumed three times; a
lost connection is still resumed. The page says what failed in words; the database's own message (its SQL)
goes to the server log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import date

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from agents.data.types import SourceDocument
from agents.memo.outputs import EvidenceOutput
from memos.models import AgentStep, Company, Run, StageClaim
from memos.models import SourceDocument as SourceDocumentRow
from memos.pipeline import driver, registry
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.fact_store import save_documents
from tests.memos.pipeline_support import quick_memo_run

pytestmark = pytest.mark.django_db(transaction=True)

SQL_WORDS = ("DataError", "IntegrityError", "OperationalError", "psycopg", "character varying", "INSERT")


@pytest.fixture
def run() -> Iterator[Run]:
    yield from quick_memo_run()


def with_data_stage(monkeypatch: pytest.MonkeyPatch, body: Callable[[StageContext], None]) -> None:
    memo = registry.WORKFLOWS["memo"]
    stages = tuple(replace(s, body=body) if s.name == "data" else s for s in memo.stages)
    monkeypatch.setitem(registry.WORKFLOWS, "memo", replace(memo, stages=stages))


def test_a_step_and_a_run_that_quote_text_read_back_with_nul_characters_are_stored_without_them(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a PDF reader made of glyphs no font had: NUL characters, quoted in an output, an error, a message.
    def quoting(ctx: StageContext) -> None:
        step = ctx.step("evidence")
        ctx.start(step)
        ctx.finish(step, EvidenceOutput(data_version="read back as \x00\x00 from slide 3", specialists={}))
        raise StageFailed("slide 3 read back as \x00\x00, which is not a figure")

    with_data_stage(monkeypatch, quoting)
    driver.execute_stage(str(run.pk), "data")
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.status_message == "slide 3 read back as , which is not a figure"
    step = AgentStep.objects.get(run=run, key="evidence")
    assert step.status == "done" and isinstance(step.output, dict)
    assert step.output["data_version"] == "read back as  from slide 3"


def test_a_document_a_feed_delivered_with_a_nul_and_a_lone_surrogate_is_loaded_without_them() -> None:
    document = SourceDocument(
        doc_id="news:00000000000000ff",
        kind="news",
        title="Buyback \x00update",
        url="https://example.org/buyback",
        published=date(2026, 10, 1),
        source="Wire\ud800",
        text="The board added \x00to the programme.",
        tickers=("AAPL",),
    )
    assert save_documents([document]) == 1
    row = SourceDocumentRow.objects.get(doc_id=document.doc_id)
    assert (row.title, row.source, row.text) == (
        "Buyback update",
        "Wire",
        "The board added to the programme.",
    )


def test_a_write_the_database_refuses_fails_the_run_at_once_saying_so_in_words(
    run: Run, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refused(ctx: StageContext) -> None:
        ctx.start(ctx.step("evidence"))
        Company.objects.create(ticker="X" * 40, name="a ticker longer than its column")

    with_data_stage(monkeypatch, refused)
    with caplog.at_level(logging.ERROR, logger="memos.pipeline.driver"):
        driver.execute_stage(str(run.pk), "data")
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.status_message == (
        "the data stage stopped: the database refused to store what the stage wrote; "
        "the details are in the server log"
    )
    assert list(StageClaim.objects.filter(run=run).values_list("outcome", flat=True)) == ["failed"]
    step = AgentStep.objects.get(run=run, key="evidence")
    assert step.status == "failed" and not any(word in step.error for word in SQL_WORDS)
    assert "character varying" in caplog.text  # the details are in the log
    page = Client()
    page.force_login(run.brief.owner)
    html = page.get(reverse("run", args=[run.pk])).content.decode()
    assert "the database refused to store what the stage wrote" in html
    assert not any(word in html for word in SQL_WORDS)


def test_a_broken_constraint_fails_the_run_at_once(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    def duplicate(ctx: StageContext) -> None:
        Company.objects.create(ticker="AAPL", name="Apple again")

    with_data_stage(monkeypatch, duplicate)
    driver.execute_stage(str(run.pk), "data")
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert StageClaim.objects.filter(run=run).count() == 1
    assert not any(word in run.status_message for word in SQL_WORDS)


def test_a_lost_database_connection_is_resumed_and_said_in_words(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(ctx: StageContext) -> None:
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')

    with_data_stage(monkeypatch, unreachable)
    driver.execute_stage(str(run.pk), "data")
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING
    assert run.status_message == (
        "the data stage hit an error (the database could not be reached; the details are in the server "
        "log); it will be resumed (attempt 1 of 3)"
    )


def test_a_message_stored_with_a_database_error_before_is_shown_in_words(run: Run) -> None:
    stored = (
        "the memo stage failed 3 times; the last error: DataError: unsupported Unicode escape sequence\n"
        "DETAIL:  \\u0000 cannot be converted to text.\nCONTEXT:  JSON data, line 1: ..."
    )
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, status_message=stored)
    AgentStep.objects.filter(run=run).update(status="failed", error=stored)
    page = Client()
    page.force_login(run.brief.owner)
    html = page.get(reverse("run", args=[run.pk])).content.decode()
    step = AgentStep.objects.filter(run=run).first()
    assert step is not None
    document = page.get(reverse("run_step", args=[run.pk, step.pk])).content.decode()
    for shown in (html, document):
        assert "a database error stopped this work; the details are in the server log" in shown
        assert "cannot be converted" not in shown and "DataError" not in shown
