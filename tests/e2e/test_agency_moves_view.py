"""The agency's moves checked by code and its jury, read in a real browser: an analyst runs the quick profile
on Apple with the embedded model's own proposals ("Acquisition of Google Inc.", "Divestment from Apple Inc.")
and reads, on the run page, the moves set aside with their reasons and figures, the jury's two threads with
the objections left standing, and the version's ranking with the jury's verdict under each recommended
move."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from agents.agency.fakes import REJECTION_LINE
from agents.llm.fakes.reading import message_text
from tests.e2e.conftest import SCREENSHOTS, Desk, start_desk, start_from_form
from tests.e2e.test_agency_view import QUESTION, log_in
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_TIMEOUT_MS = 120_000


def _moves(schema: dict[str, Any], messages: Any) -> dict[str, Any]:
    def move(action: str, target: str, title: str) -> dict[str, Any]:
        return {
            "action": action,
            "target": target,
            "title": title,
            "move": f"The company should pursue this: {title.lower()}, within the year.",
            "reasoning": ["The findings cited point to room for this move.", "It keeps options open."],
            "risks": ["Execution could take longer than planned."],
            "citations": ["F1.1"],
        }

    return {
        "low": move("divest", "Apple Inc.", "Divestment from Apple Inc."),
        "medium": move("acquire", "Tesla, Inc.", "Acquire Tesla"),
        "high": move("acquire", "Google Inc.", "Acquisition of Google Inc."),
    }


def _standing(schema: dict[str, Any], messages: Any) -> dict[str, Any]:
    """The rejection's first objection stands on its own words; the others are answered by the move's."""
    user = message_text(messages, "user")
    memo = [line for line in user.split(REJECTION_LINE, 1)[1].splitlines() if line and line[:2] != "<<"]
    move = next(
        line.removeprefix("The move:").strip() for line in user.splitlines() if line.startswith("The move:")
    )
    return {
        "objections": [
            {
                "objection": "Nothing in the findings shows demand.",
                "ruling": "stands",
                "quote": " ".join(memo[0].split()[:8]),
            },
            {"objection": "It costs too much.", "ruling": "answered", "quote": " ".join(move.split()[:8])},
            {"objection": "The timing is wrong.", "ruling": "answered", "quote": " ".join(move.split()[:8])},
        ]
    }


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"agency-moves-{name}.png"), full_page=True, animations="disabled")


def test_the_moves_set_aside_and_the_jury_s_standing_objections_read_on_the_pages(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    load_desk_data("AAPL")
    analyst("ana")
    desk = start_desk(
        desk_factory, {"agency_analyst_capital": [_moves], "agency_jury_rulings": [_standing]}, latency_ms=0
    )
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, desk)
    start_from_form(page, ticker="AAPL", question=QUESTION, workflow="agency", profile="quick")
    desk.start_worker()
    expect(page.locator("#run-status")).to_have_attribute(
        "data-status", re.compile("done|needs_review"), timeout=RUN_TIMEOUT_MS
    )

    page.locator("#stage-proposals .stage-head").click()
    page.locator("li.step[data-stage='proposals'] a.step-card", has_text="Duplicates merged").click()
    moves = page.locator("#drawer-body article.doc-moves")
    expect(moves.locator(".set-aside")).to_contain_text("infeasible")
    expect(moves.locator(".set-aside")).to_contain_text("generic")
    print("\n[e2e] moves page:\n" + moves.inner_text())
    shot(page, "01-moves")
    page.click("#drawer-close")
    page.keyboard.press("Escape")

    page.locator("#stage-final .stage-head").click()
    page.locator("li.step[data-stage='final'] a.step-card", has_text="Jury").click()
    jury = page.locator("#drawer-body article.doc-jury")
    expect(jury).to_contain_text("Objections left standing")
    expect(jury).to_contain_text("Nothing in the findings shows demand.")
    print("\n[e2e] jury page:\n" + jury.inner_text())
    shot(page, "02-jury")
    page.click("#drawer-close")
    page.keyboard.press("Escape")

    page.locator("#run-status a.version-link").click()
    version = page.locator(".agency-version")
    expect(version.locator(".jury-verdict").first).to_be_visible()
    expect(version.locator(".set-aside")).to_have_count(2)
    print("\n[e2e] version:\n" + version.inner_text())
    shot(page, "03-version")
