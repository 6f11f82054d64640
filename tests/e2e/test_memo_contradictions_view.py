"""A memo whose claims contradict one another and the latest memo of another brief on the company, in a real
browser: the flags sit at the top of its version page, both claims quoted, their specialists named, the other
memo linked (and the link opens it).

Screenshots go to var/screenshots/memo/ to be looked at.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from playwright.sync_api import Browser, expect

from memos.models import ArtefactVersion, Run
from tests.conftest import ROOT
from tests.e2e.conftest import Desk, start_desk
from tests.e2e.test_deck_view import log_in
from tests.memos.memo.test_contradictions_page import FELL, ROSE, claim, memo_run
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = ROOT / "var" / "screenshots" / "memo"


def test_a_memo_shows_its_contradicting_claims_quoted_and_links_the_other_briefs_memo(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    load_desk_data("AAPL")
    owner = analyst()
    runs: list[Run] = []

    def run_both() -> None:  # off Playwright's event loop: the pipeline is synchronous Django code
        try:
            runs.append(
                memo_run(owner, "Is the services mix worth a premium?", [claim(ROSE, "AAPL:revenue:FY2024")])[
                    0
                ]
            )
            runs.append(
                memo_run(
                    owner,
                    "Should the committee trim ahead of the China data?",
                    [
                        claim(FELL, "AAPL:revenue:FY2024"),
                        claim(
                            "Gross margin improved on the services mix.",
                            "AAPL:gross_margin:FY2023",
                            "AAPL:gross_margin:FY2024",
                        ),
                        claim("Gross margin declined on dearer components.", "AAPL:gross_margin:FY2024"),
                    ],
                )[0]
            )
        finally:
            connection.close()

    worker = threading.Thread(target=run_both)
    worker.start()
    worker.join()
    first, second = (ArtefactVersion.objects.get(run=run) for run in runs)
    desk = start_desk(desk_factory, {}, latency_ms=0)
    page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
    log_in(page, desk, owner.username)
    page.goto(f"{desk.base_url}/versions/{second.pk}/")
    panel = page.locator("#contradictions")
    expect(panel).to_be_visible()
    expect(panel.locator("h2")).to_have_text("Contradictions between claims: 2 flagged")
    expect(panel).to_contain_text("The fundamentals brief reads gross margin for FY2024 (AAPL) both ways")
    expect(panel).to_contain_text(
        "the memo v1 of another brief on AAPL rests on a fundamentals claim that it rose"
    )
    expect(panel.locator(".contradiction-second").last).to_contain_text(ROSE)
    expect(panel.locator(".contradiction-first").last).to_contain_text(FELL)
    panel.screenshot(path=str(SHOTS / "memo-contradictions.png"))
    page.screenshot(path=str(SHOTS / "memo-contradictions-page.png"))
    panel.locator(".contradiction-second a").first.click()
    expect(page).to_have_url(f"{desk.base_url}/versions/{first.pk}/")
    expect(page.locator("#contradictions")).to_contain_text("No other brief")
