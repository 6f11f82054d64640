"""Seed 002's dashboard in a real browser: an analyst screens a watchlist from the brief form, watches the
stages fill in live, and when the flags are decided the dashboard appears on its own: the executive
summary, the sector themes, then the symbol inspector with the quant profile and a price chart drawn by
code. The frozen version shows the same dashboard, with its standalone report one click away."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import SCREENSHOTS, Desk, start_desk
from tests.e2e.test_agency_view import log_in
from tests.memos.pipeline_support import analyst

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 120_000


def test_a_screen_from_the_form_ends_in_its_dashboard(browser: Browser, desk_factory: list[Desk]) -> None:
    analyst("ana")
    desk = start_desk(desk_factory, {}, latency_ms=300)
    page = screen_from_the_form(browser, desk, "XOM, CVX, BP, DUK, NEE, JPM, BAC")
    expect(page.locator("#screen-dashboard[data-reload-when-done]")).to_be_visible()
    desk.start_worker()
    # The dashboard replaces the waiting panel when the run ends, without a reader's reload.
    expect(page.get_by_role("heading", name="Executive summary")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_role("heading", name="Sector themes")).to_be_visible()
    expect(page.locator(".sector-card")).to_have_count(3)
    # Issue 32, 4: the portfolio and the lists are code's, each text says who wrote it, the gap is declared.
    summary = page.locator(".dash-summary")
    expect(summary.locator(".dash-market-week .by-code")).to_be_visible()
    expect(summary.locator(".dash-portfolio")).to_contain_text("candidates in 3 sectors")
    expect(summary.locator(".candidate-list[data-side=strongest] li")).to_have_count(3)
    expect(summary).to_contain_text("Not held: yield curve")
    expect(page.locator(".sector-card .by-senior-analyst").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "screen-run.png"), full_page=True)
    page.locator(".symbol-table a", has_text="XOM").click()
    inspector = page.locator("#inspect-XOM")
    expect(inspector).to_be_visible()
    expect(inspector.locator("svg.price-chart path")).to_have_count(4)  # close, two averages, the benchmark
    expect(inspector).to_contain_text("is the market's move")
    inspector.screenshot(path=str(SCREENSHOTS / "screen-inspector.png"))
    page.locator("a.version-link").first.click()
    expect(page.get_by_role("heading", name="Executive summary")).to_be_visible()
    report = page.get_by_role("link", name="The standalone HTML report")
    expect(report).to_have_attribute("href", re.compile(r"/versions/\d+/files/report\.html$"))
    # The standalone report labels its texts by writer and declares the gap too.
    html = page.request.get(desk.base_url + (report.get_attribute("href") or "")).text()
    report_page = browser.new_page(viewport={"width": 1200, "height": 1000})
    report_page.set_content(html)  # served as a download: opened as the file a reader saves
    expect(report_page.locator(".dash-market-week .by-code")).to_be_visible()
    expect(report_page.locator(".screen-inputs")).to_contain_text("Not held: yield curve")
    report_page.screenshot(path=str(SCREENSHOTS / "screen-report.png"), full_page=True)
    report_page.close()
    # The strategy's page: the week this screen froze, with its criteria.
    page.get_by_role("link", name="The strategy and its success criteria, week by week").click()
    expect(page.locator("tr[data-week='2015-08-21']")).to_have_count(1)
    page.screenshot(path=str(SCREENSHOTS / "screen-strategy.png"), full_page=True)
    page.go_back()
    # Every finished step opens its document, the code-only ones included (they once said "Not written yet").
    page.go_back()
    expect(page.get_by_role("heading", name="Executive summary")).to_be_visible()
    titles = ("Quant analyst (code)", "Price charts (code)", "News analyst: the market overview")
    hrefs = [page.locator("a.step-card", has_text=title).first.get_attribute("href") for title in titles]
    for title, href in zip(titles, hrefs, strict=True):
        assert href is not None, title
        page.goto(desk.base_url + href)
        expect(page.locator("article.doc[data-status=done]")).to_be_visible()
        expect(page.get_by_text("Not written yet")).to_have_count(0)
        if title.startswith("Quant"):
            page.screenshot(path=str(SCREENSHOTS / "screen-quant-step.png"), full_page=True)


def screen_from_the_form(browser: Browser, desk: Desk, watchlist: str) -> Page:
    """An analyst's page, signed in, on the run page of a screen of ``watchlist`` started from the form."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, desk)
    page.get_by_role("link", name="New brief").click()
    page.check("input[name=workflow][value=screen]")
    page.fill("textarea[name=watchlist]", watchlist)
    page.fill("textarea[name=question]", "Which symbols moved on their own this week, and why?")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    return page
