"""A partial version in a real browser (issue 31, 1): a screen whose reading of one sector never fits its
schema ends needing review; its run page names the part and offers "Retry what failed"; its version says it
is partial above everything and opens no vote until its analyst accepts it; the retry pays only for what
failed and freezes a whole version over it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from memos.models import ArtefactVersion, LLMCall, Motion, Run
from tests.e2e.conftest import SCREENSHOTS, Desk, start_desk
from tests.e2e.test_screen_view import screen_from_the_form
from tests.memos.pipeline_support import analyst
from tests.memos.screen.test_partial_screen import BreakOneSector

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 120_000


def test_a_partial_screen_waits_for_its_analyst_and_a_retry_makes_it_whole(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    analyst("ana")
    breaker = BreakOneSector()
    desk = start_desk(desk_factory, {"screen_news_sector": [breaker] * 40}, latency_ms=50)
    page = screen_from_the_form(browser, desk, "XOM, CVX, BP, DUK, NEE, D")
    desk.start_worker()
    unfinished = page.locator("#run-unfinished")
    expect(unfinished).to_be_visible(timeout=RUN_TIMEOUT_MS)
    title = f"News analyst: {breaker.sector}"
    expect(unfinished).to_contain_text(title)
    page.screenshot(path=str(SCREENSHOTS / "partial-run.png"), full_page=True)

    # The version: partial above everything, no vote open, the analyst's two choices.
    page.locator("a.version-link").first.click()
    banner = page.locator("#partial")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Partial: parts of this screen's run did not finish")
    expect(banner).to_contain_text(title)
    box, head = banner.bounding_box(), page.locator(".version-head").bounding_box()
    assert box is not None and head is not None and box["y"] < head["y"]
    page.screenshot(path=str(SCREENSHOTS / "partial-version.png"), full_page=True)
    version = ArtefactVersion.objects.get()
    assert not Motion.objects.filter(version=version).exists()
    page.get_by_role("button", name="Accept as partial").click()
    expect(page.locator("#accepted-partial")).to_contain_text("Accepted as partial by ana")
    expect(page.get_by_role("button", name="Accept as partial")).to_have_count(0)
    assert Motion.objects.filter(version=version, closed_at__isnull=True).exists()

    # Retry what failed: a new run whose answered calls come from the ledger.
    breaker.on = False
    page.get_by_role("button", name="Retry what failed").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    expect(page.locator("#retry-of")).to_be_visible()
    expect(page.get_by_role("heading", name="Executive summary")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    retry = Run.objects.get(retry_of__isnull=False)
    retry.refresh_from_db()
    assert retry.status == Run.Status.DONE, retry.status_message
    assert LLMCall.objects.filter(run=retry, outcome=LLMCall.Outcome.CACHED).exists()
    whole = ArtefactVersion.objects.get(run=retry)
    assert not whole.partial
    version.refresh_from_db()
    assert version.status == ArtefactVersion.Status.SUPERSEDED
    expect(page.locator("#run-unfinished")).to_have_count(0)
