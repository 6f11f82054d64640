"""The desk's week end to end on the fake OpenAI-compatible server: the screen, the names code picks, a quick
memo on each, the digest frozen and announced once, and ``manage.py week --json``."""

from __future__ import annotations

import json
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command

from agents.week.outputs import DigestOutput
from memos.models import ArtefactVersion, Notice, Run
from memos.pipeline import driver
from memos.pipeline.week.desk.start import start_week
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, person
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

WATCHLIST = ["AAPL", "XOM", "CVX", "DUK", "NEE", "JPM", "BAC"]
AS_OF = date(2015, 8, 21)


def _week(**options: object) -> Run:
    with changed("memos.pipeline.week", owner="analyst"):
        return start_week(as_of=AS_OF, max_names=2, symbols=WATCHLIST, enqueue=False)


def test_a_week_screens_looks_closer_at_the_flagged_names_and_freezes_one_digest() -> None:
    analyst("analyst")
    person("committee", "committee")
    load_desk_data("AAPL")
    week = _week()
    with fake_llm():
        driver.run_inline(str(week.pk))
    week.refresh_from_db()
    print(week.status, week.status_message)
    parts = Run.objects.filter(part_of=week)
    print([(p.workflow, p.status, p.status_message[:100], p.scheduled) for p in parts])
    digest = DigestOutput.model_validate(ArtefactVersion.objects.get(run=week).content)
    print(digest.model_dump_json(indent=1)[:3000])
    print(list(Notice.objects.values_list("recipient__username", "version__kind", "event")))
    assert week.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW)
