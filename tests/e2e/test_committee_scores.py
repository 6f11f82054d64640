"""A committee member scores a deck in a real browser, beside the vote: one choice 0-5 per dimension of the
judge's rubrics, each with its anchors in view; an incomplete answer is held by the browser; once recorded,
the page shows the member's own scores, and the deck's run page counts the scored decks toward the five
the judge's agreement figures need.

Screenshots go to var/screenshots/deck/ to be looked at.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from memos.models import GoldScore
from memos.services.accounts import Roles
from tests.e2e.conftest import Desk, start_desk
from tests.e2e.test_deck_view import SHOTS, log_in, shot
from tests.memos.deck_support import finished_deck
from tests.memos.review.support import member

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_committee_member_scores_a_deck_and_the_run_page_counts_it(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    done = finished_deck("quick")
    member("carol", Roles.COMMITTEE)
    desk = start_desk(desk_factory, {}, latency_ms=0)
    page = browser.new_context(viewport={"width": 1360, "height": 900}).new_page()
    log_in(page, desk, "carol")

    page.goto(f"{desk.base_url}/versions/{done.version.pk}/")
    form = page.locator("#score-form")
    expect(form).to_be_visible()
    rows = form.locator("tbody tr")
    expect(rows).to_have_count(9)  # R2's five and R1's five, actionability shared
    expect(form).to_contain_text("Every section ends in a decision-relevant takeaway")
    page.locator("#scoring").scroll_into_view_if_needed()
    shot(page, "committee-score-form")

    for index in range(8):  # all but the last dimension: the browser holds the form
        rows.nth(index).locator("input[value='4']").check()
    form.get_by_role("button", name="Record my scores").click()
    assert not GoldScore.objects.exists()
    rows.nth(8).locator("input[value='3']").check()
    form.get_by_role("button", name="Record my scores").click()

    own = page.locator("#own-scores")
    expect(own).to_contain_text("Your scores of")
    expect(page.locator("#score-form")).to_have_count(0)
    assert GoldScore.objects.filter(scored_by__username="carol").count() == 2  # R2 and R1

    page.goto(f"{desk.base_url}/runs/{done.run.pk}/")
    panel = page.locator("#judge-agreement")
    expect(panel).to_contain_text("R2: 1 of 5 decks scored")
    panel.locator("summary").click()
    expect(panel).to_contain_text("1 of 5 decks scored by the committee")
    shot(page, "committee-run-page-judge")
