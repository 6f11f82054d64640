"""A stage reads its brief's language once (every company's name, in one query), however often its steps ask:
a memo's last stage asked three times, a screen's readings once each."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memos.models import Company, Run
from memos.pipeline.inputs import language
from tests.memos.engine.test_engine import claim, context, run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stage_reads_the_language_once_and_the_next_stage_reads_it_again(run: Run) -> None:  # noqa: F811
    stage = context(run, claim(run))
    with CaptureQueriesContext(connection) as read:
        first, again = language(stage), language(stage)
    names = [q for q in read.captured_queries if '"memos_company"."name"' in q["sql"]]
    assert first is again and len(names) == 1
    Company.objects.create(ticker="ZZZZ", name="株式会社テスト", cik=1)
    assert "株式会社テスト" not in language(stage).names  # kept for this stage
    assert "株式会社テスト" in language(context(run, stage.hold)).names  # a new stage reads it again
