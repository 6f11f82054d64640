"""The strategy's page shows seed 002's success criteria week by week, read from the frozen screen versions
a reader may see (issue 32, 4): two weeks screened, two rows in week order with the criteria each version
froze; an analyst who owns neither sees none of them."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.test import Client

from agents.screen.outputs import ScreenResult
from memos.models import AgentStep, Run
from memos.pipeline import driver
from tests.memos.pipeline_support import fake_llm, person
from tests.memos.screen.test_screen_run import _screen

pytestmark = pytest.mark.django_db(transaction=True)

SYMBOLS = ["XOM", "CVX", "DUK", "NEE"]


def _screened(as_of: date) -> Run:
    run = _screen(SYMBOLS, as_of=as_of.isoformat())
    driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    return run


def test_the_strategy_page_shows_each_weeks_criteria_from_its_frozen_version() -> None:
    with fake_llm():
        earlier, later = _screened(date(2015, 8, 14)), _screened(date(2015, 8, 21))
    client = Client()
    client.force_login(later.brief.owner)
    page = client.get("/screen/strategy/").content.decode()
    rows = re.findall(r'<tr data-week="([0-9-]+)">(.*?)</tr>', page, re.DOTALL)
    assert [week for week, _ in rows] == ["2015-08-21", "2015-08-14"]  # the latest week first
    for (_, row), run in zip(rows, (later, earlier), strict=True):
        criteria = ScreenResult.model_validate(AgentStep.objects.get(run=run, key="flags").output).criteria
        assert criteria is not None
        cells = re.sub(r"<[^>]+>", "|", row)
        assert f"{criteria.grounded} of {criteria.symbols}" in cells
        assert f"{criteria.llm_calls} ({criteria.call_bound})" in cells
        assert f"{criteria.said_no_catalyst} of {criteria.low_evidence}" in cells
    assert "stocknet" in page  # the desk's strategy, above its weeks
    # The dashboard links to it.
    version_page = client.get(f"/runs/{later.pk}/").content.decode()
    assert 'href="/screen/strategy/"' in version_page

    outsider = Client()
    outsider.force_login(person("olga", "analyst"))
    other = outsider.get("/screen/strategy/").content.decode()
    assert "data-week=" not in other and "No screen has been frozen yet that you may read." in other
