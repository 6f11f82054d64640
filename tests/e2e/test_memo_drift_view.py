"""A memo that contradicts the one before it, in a real browser: "Drift against v1" is the first thing under
the header, both sides quoted; below the review, the analyst sets the weekly memo.

Screenshots go to var/screenshots/memo/ to be looked at.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from playwright.sync_api import Browser, expect

from memos.models import ArtefactVersion, MemoSchedule, Run
from memos.pipeline.workflows import Artefact
from memos.services.versions import freeze
from tests.conftest import ROOT
from tests.e2e.conftest import Desk, start_desk
from tests.e2e.test_deck_view import log_in
from tests.memos.pipeline_support import analyst, finished_run, load_desk_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = ROOT / "var" / "screenshots" / "memo"


def test_a_flipped_memo_shows_its_drift_first_and_its_analyst_sets_the_weekly_memo(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    load_desk_data("AAPL")
    owner = analyst()
    first = ArtefactVersion.objects.get(run=finished_run(owner))
    stated = first.content["firewall"]["final"]
    flipped = "BUY" if stated == "SELL" else "SELL"
    content = {**first.content, "firewall": {**first.content["firewall"], "final": flipped}}
    again = Run.objects.create(brief=first.brief, created_by=owner, status=Run.Status.DONE, workflow="memo")
    frozen: list[ArtefactVersion] = []

    def freeze_second() -> None:  # off Playwright's event loop: freezing announces the version live
        try:
            _freeze()
        finally:
            connection.close()  # this thread's own session, which the test database must not outlive

    def _freeze() -> None:
        with transaction.atomic():
            frozen.append(
                freeze(
                    run=again,
                    artefact=Artefact(
                        kind="memo",
                        title=first.title,
                        content=content,
                        sections={**first.sections, "Headline thesis": "Hardware demand is rolling over."},
                        evaluated=True,
                        cited=tuple(str(source["id"]) for source in first.sources),
                    ),
                )
            )

    worker = threading.Thread(target=freeze_second)
    worker.start()
    worker.join()
    (second,) = frozen
    desk = start_desk(desk_factory, {}, latency_ms=0)
    page = browser.new_context(viewport={"width": 1360, "height": 900}).new_page()
    log_in(page, desk, owner.username)
    page.goto(f"{desk.base_url}/versions/{second.pk}/")
    drift = page.locator("#drift")
    expect(drift).to_be_visible()
    expect(drift).to_contain_text(f"from {stated} (v1) to {flipped} (v2)")
    expect(drift.locator(".drift-after")).to_contain_text("Hardware demand is rolling over.")
    page.screenshot(path=str(SHOTS / "memo-drift.png"))

    form = page.locator("#memo-schedule-form")
    form.locator("input[value=on]").check()
    form.locator("select[name=weekday]").select_option("4")
    form.locator("input[name=at]").fill("08:30")
    form.get_by_role("button", name="Save the weekly memo").click()
    expect(page.locator("#memo-schedule-cadence")).to_contain_text("every Friday at 08:30 UTC")
    page.locator("#memo-schedule").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "memo-weekly.png"))
    assert MemoSchedule.objects.get(brief=first.brief).weekday == 4
