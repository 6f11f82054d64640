"""A deck version in a real browser: its analyst pages through the slides with the arrow keys and the
thumbnail strip, and reads a figure's citation by focusing it with the keyboard and by hovering it.

The deck run finishes in this process on the fake LLM; the web server serves the desk from the same test
database.
Screenshots go to var/screenshots/deck/ to be looked at.
"""

from __future__ import annotations

import subprocess
import time

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from agents.deck.outputs import LapOutput
from agents.deck.spec import Slide
from tests.conftest import ROOT
from tests.e2e.conftest import Desk, start_desk
from tests.memos.deck_support import finished_deck

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = ROOT / "var" / "screenshots" / "deck"
THUMBNAIL_WIDTH_PX = 480
LOAD_TIMEOUT_S = 30.0


def shot(page: Page, name: str, *, full_page: bool = False) -> None:
    if full_page:
        page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page, animations="disabled")


def log_in(page: Page, desk: Desk, username: str) -> None:
    page.goto(f"{desk.base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-secret-pass")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{desk.base_url}/")


def thumbnails_loaded(page: Page, selector: str) -> list[int]:
    """The natural widths of the images under ``selector``, once each has loaded (0: it failed). Polled
    from here: the page's policy refuses the eval behind ``wait_for_function``."""
    page.locator(selector).first.scroll_into_view_if_needed()
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while True:
        loaded: list[list[int]] = page.eval_on_selector_all(
            selector, "(imgs) => imgs.map((img) => [img.complete ? 1 : 0, img.naturalWidth])"
        )
        if all(complete for complete, _ in loaded) or time.monotonic() > deadline:
            return [width for _, width in loaded]
        time.sleep(0.1)


def first_with_figures(slides: tuple[Slide, ...], start: int) -> Slide:
    return next(slide for slide in slides if slide.number >= start and slide.figures())


def test_a_reader_pages_through_the_deck_by_keyboard_and_strip_and_reads_each_figures_citation(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    done = finished_deck("quick")
    run, version, deck = done.run, done.version, done.deck
    count = len(deck.slides)
    desk = start_desk(desk_factory, {}, latency_ms=0)

    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    problems: list[str] = []

    def noted(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(message.text)

    page.on("console", noted)
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, desk, run.brief.owner.username)

    page.goto(f"{desk.base_url}/versions/{version.pk}/")
    position = page.locator(".deck-position")
    expect(position).to_have_text(f"Slide 1 of {count}")
    expect(page.locator("#slide-1")).to_be_visible()
    expect(page.locator("#slide-2")).to_be_hidden()
    expect(page.locator("#slide-1 .slide-title")).to_have_text(deck.slides[0].title)
    assert thumbnails_loaded(page, ".deck-strip img") == [THUMBNAIL_WIDTH_PX] * count
    page.locator("#deck-viewer").scroll_into_view_if_needed()
    shot(page, "01-slide-1")

    page.keyboard.press("ArrowRight")
    expect(page.locator("#slide-2")).to_be_visible()
    expect(page.locator("#slide-1")).to_be_hidden()
    expect(position).to_have_text(f"Slide 2 of {count}")
    expect(page.locator("#slide-2 .slide-title")).to_have_text(deck.slides[1].title)
    assert page.url.endswith("#slide-2")
    expect(page.locator('.deck-strip a[aria-current="true"]')).to_have_attribute("data-slide", "2")
    shot(page, "02-slide-2-after-arrow-right")

    # A figure's citation, by keyboard: Tab reaches the figure (a link to its fact) and its tooltip shows.
    slide = first_with_figures(deck.slides, 2)
    while position.inner_text() != f"Slide {slide.number} of {count}":
        page.keyboard.press("ArrowRight")
    figure = slide.figures()[0]
    element = page.locator(f"#slide-{slide.number} .fig").first
    expect(element).to_have_text(figure.display)
    element.focus()
    tip = page.locator(f"#{element.get_attribute('aria-describedby')}")
    expect(tip).to_be_visible()
    for part in (figure.fact_id, figure.label, figure.period, figure.source):
        expect(tip).to_contain_text(part)
    expect(tip.get_by_role("link", name="Open the fact")).to_have_attribute(
        "href", f"/facts/{figure.fact_id}/"
    )
    shot(page, "03-citation-on-focus")
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()

    # By mouse: hovering another figure shows its own citation.
    figures = page.locator(f"#slide-{slide.number} .fig")
    last = figures.nth(figures.count() - 1)
    last.hover()
    last_tip = page.locator(f"#{last.get_attribute('aria-describedby')}")
    expect(last_tip).to_be_visible()
    expect(last_tip).to_contain_text(slide.figures()[-1].fact_id)
    shot(page, "04-citation-on-hover")

    # The strip jumps; the left arrow goes back; the first slide cannot go further back.
    page.locator(f'.deck-strip a[data-slide="{count}"]').click()
    expect(position).to_have_text(f"Slide {count} of {count}")
    expect(page.get_by_role("button", name="Next →")).to_be_disabled()
    shot(page, "05-last-slide-from-the-strip")
    for _ in range(count):
        page.keyboard.press("ArrowLeft")
    expect(position).to_have_text(f"Slide 1 of {count}")
    expect(page.get_by_role("button", name="← Previous")).to_be_disabled()
    page.goto(f"{desk.base_url}/versions/{version.pk}/")
    shot(page, "06-version-page-top", full_page=True)

    # A run's lap shows its deck's slides as images drawn for the step.
    lap = done.step("lap")
    candidate = LapOutput.model_validate(lap.output).candidate
    assert candidate is not None
    page.goto(f"{desk.base_url}/runs/{run.pk}/steps/{lap.pk}/")
    drawn = thumbnails_loaded(page, ".deck-thumbs img")
    assert drawn == [THUMBNAIL_WIDTH_PX] * len(candidate.deck.slides)
    shot(page, "07-lap-thumbnails")

    # The version's PDF: its slides, as stored when it was frozen (the deck's render.pdf).
    printed = page.request.get(f"{desk.base_url}/versions/{version.pk}/pdf/")
    assert printed.ok and printed.headers["content-type"] == "application/pdf"
    (SHOTS / "page.pdf").write_bytes(printed.body())
    subprocess.run(
        [
            "pdftoppm",
            "-png",
            "-r",
            "60",
            "-f",
            "1",
            "-l",
            "3",
            str(SHOTS / "page.pdf"),
            str(SHOTS / "08-page-pdf"),
        ],
        check=True,
        timeout=60,
    )
    assert not problems, problems
