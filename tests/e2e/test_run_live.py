"""An analyst starts a run in a real browser and watches it finish live, then reads its documents.

The web server scripts/run.sh starts (two uvicorn processes) serves the pages and the socket, a real RQ
worker runs the pipeline, the fake OpenAI-compatible server answers (300 ms a call), all on loopback. The
run page is served by one server process and its socket accepted by the other, as happens in production;
the worker starts only once the run page is open, so the page must learn every change from that socket
(through Redis, from the worker's process): it is never reloaded while the run goes on.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from memos.models import AgentStep, FactRecord, Run
from tests.e2e.conftest import SCREENSHOTS, Desk, quick_script, start_desk
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

QUESTION = "Does cash generation fund the next product cycle, or is the market right to discount it?"
RUN_TIMEOUT_MS = 90_000
LOG_TIMEOUT_S = 10.0
# Each load of the page opens a new socket, accepted by whichever server process is quicker: about one in
# four lands in the other process here (measured), so 40 loads all in one process would be a broken server.
SPLIT_TRIES = 40

# Every card a swap puts into the pipeline, per step key, in order: the test reads how a card moved.
RECORD_CARDS = """
window.__cards = {};
const record = (card) => (window.__cards[card.dataset.key] ||= []).push(card.dataset.status);
document.addEventListener("DOMContentLoaded", () => {
  const pipeline = document.getElementById("pipeline");
  if (!pipeline) return;
  pipeline.querySelectorAll("li.step").forEach(record);
  new MutationObserver((changes) => {
    for (const change of changes)
      for (const node of change.addedNodes)
        if (node.nodeType === 1 && node.matches("li.step")) record(node);
  }).observe(pipeline, { childList: true, subtree: true });
});
"""


def shot(page: Page, name: str, *, full_page: bool = True) -> None:
    # Finite animations jump to their end and endless ones stop, so a screenshot shows the settled page;
    # a full-page one starts at the top, or the sticky bar is drawn where the page was scrolled to.
    if full_page:
        page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page, animations="disabled")


def card(page: Page, key: str) -> str:
    return f'li.step[data-key="{key}"]'


def log_in(page: Page, desk: Desk, username: str, password: str) -> None:
    page.goto(f"{desk.base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    expect(page.get_by_role("link", name="New brief")).to_be_visible()


def start_brief(page: Page) -> None:
    page.get_by_role("link", name="New brief").click()
    page.fill("input[name=ticker]", "ZZZZQ")
    page.fill("textarea[name=question]", QUESTION)
    page.get_by_role("button", name="Start the run").click()
    expect(page.get_by_role("alert")).to_contain_text("Unknown ticker 'ZZZZQ'")
    shot(page, "01-brief-refused")
    page.fill("input[name=ticker]", "AAPL")
    page.check("input[name=profile][value=quick]")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))


def _unexpected(message: ConsoleMessage) -> bool:
    # While the test has the server down, the browser logs each refused reconnect attempt: that is the point.
    refused = "WebSocket connection" in message.text and "ERR_CONNECTION_REFUSED" in message.text
    return message.type == "error" and not refused


def open_card(page: Page, key: str, document_class: str) -> None:
    page.click(f"{card(page, key)} a.step-card")
    expect(page.locator("#drawer")).to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator(f"#drawer-body article.{document_class}")).to_be_visible()


def steps_of(run: Run) -> int:
    return AgentStep.objects.filter(run=run).count()


def served_by(desk: Desk, since: int, request: str) -> int:
    """The server process that logged ``request`` (a page's GET, a socket's accept) after ``since``."""
    deadline = time.monotonic() + LOG_TIMEOUT_S
    while time.monotonic() < deadline:
        found = [line.pid for line in desk.served(since) if line.request.startswith(request)]
        if found:
            return found[-1]
        time.sleep(0.05)  # polling the log file, which another process writes
    raise AssertionError(f"the server logged no {request!r} within {LOG_TIMEOUT_S:.0f} s")


def page_and_socket_in_two_processes(page: Page, desk: Desk, run: Run) -> tuple[int, int]:
    """Load the run page until the process that served it and the one that accepted its socket differ:
    (page's process, socket's process)."""
    for _ in range(SPLIT_TRIES):
        since = desk.log_mark()
        page.reload()
        expect(page.locator("#live")).to_have_attribute("data-state", "live")
        served = served_by(desk, since, f"GET /runs/{run.pk}/ ")
        accepted = served_by(desk, since, f"WebSocket /ws/runs/{run.pk}/")
        if served != accepted:
            return served, accepted
    raise AssertionError(f"{SPLIT_TRIES} loads of the run page: each socket sat in the page's own process")


def land_on_the_queued_run(page: Page, desk: Desk) -> Run:
    log_in(page, desk, "ana", "ana-secret-pass")
    shot(page, "00-home")
    start_brief(page)
    run = Run.objects.get()
    served, accepted = page_and_socket_in_two_processes(page, desk, run)
    assert {served, accepted} == desk.server_pids(), (served, accepted, desk.server_pids())
    print(f"\ne2e: the run page came from server process {served}, its socket sits in {accepted}")
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator("li.step")).to_have_count(steps_of(run))
    expect(page.locator("#run-status")).to_have_attribute("data-status", "queued")
    shot(page, "02-run-queued")
    return run


def watch_the_run_finish(page: Page, desk: Desk, run: Run) -> None:
    """The memo's document is opened while the memo is still pending; it must fill in by itself."""
    open_card(page, "memo", "doc-unfinished")
    shot(page, "03-memo-waiting", full_page=False)
    desk.start_worker()
    page.wait_for_selector(
        f'{card(page, "fundamentals")}:not([data-status="pending"])', timeout=RUN_TIMEOUT_MS
    )
    shot(page, "04-run-live", full_page=False)
    page.wait_for_selector(f'{card(page, "fundamentals")}[data-status="done"]', timeout=RUN_TIMEOUT_MS)

    # The server goes away mid-run while the worker goes on: the page reconnects with backoff and catches
    # up from the database, since the events sent meanwhile reached no one.
    desk.stop_server()
    expect(page.locator("#live")).to_have_attribute("data-state", "off")
    down = time.monotonic()
    desk.start_server()
    expect(page.locator("#live")).to_have_attribute("data-state", "live", timeout=RUN_TIMEOUT_MS)
    print(f"\ne2e: the page was without a server for {time.monotonic() - down:.1f} s")
    page.wait_for_selector(f'{card(page, "memo")}[data-status="done"]', timeout=RUN_TIMEOUT_MS)
    expect(page.locator("#run-status")).to_have_attribute("data-status", "done")
    expect(page.locator("#drawer-body article.doc-memo")).to_be_visible()
    page.click("#drawer-close")
    shot(page, "05-run-done")

    # Same document all along (no reload), and the specialist's card really went from pending to done.
    assert page.evaluate("window.__sameDocument") is True
    fundamentals = page.evaluate("window.__cards.fundamentals")
    assert fundamentals[0] == "pending" and fundamentals[-1] == "done", fundamentals
    assert page.locator("li.step[data-status='done']").count() == steps_of(run)


def follow_a_citation_of_the_fundamentals_brief(page: Page) -> None:
    page.click("#stage-specialists .stage-head")
    expect(page.locator("#stage-specialists")).to_have_class(re.compile(r"\bis-zoomed\b"))
    shot(page, "06-specialists-zoomed")
    open_card(page, "fundamentals", "doc-specialist")
    shot(page, "07-fundamentals-brief", full_page=False)
    citation = page.locator("#drawer-body a.cite[href^='/facts/']").first
    fact = FactRecord.objects.get(fact_id=citation.inner_text().strip())
    citation.click()
    page.wait_for_url(re.compile(r"/facts/"))
    expect(page.locator("main")).to_contain_text(fact.accession)
    expect(page.locator("a.out")).to_have_attribute("href", re.compile(r"^https://www\.sec\.gov/"))
    shot(page, "08-fact-page")
    page.go_back()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}/"))
    # The document that was open comes back with the page.
    expect(page.locator("#drawer-body article.doc-specialist")).to_be_visible()
    page.click("#drawer-close")


def read_the_memo_and_the_other_documents(page: Page, desk: Desk, run: Run) -> None:
    open_card(page, "memo", "doc-memo")
    firewall = (AgentStep.objects.get(run=run, key="memo").output or {})["firewall"]
    expect(page.locator("#drawer-body .recommendation .rec").last).to_have_text(firewall["final"])
    shot(page, "09-memo", full_page=False)
    for key, document_class, name in (
        ("iteration-1", "doc-iteration", "10-iteration"),
        ("evaluation", "doc-evaluation", "11-evaluation"),
        ("audit", "doc-audit", "12-audit"),
    ):
        open_card(page, key, document_class)
        shot(page, name, full_page=False)
    # The documents as pages of their own (what "Open as page" and a browser without JS show).
    for key, name in (("evaluation", "13-evaluation-page"), ("memo", "14-memo-page")):
        page.goto(f"{desk.base_url}/runs/{run.pk}/steps/{AgentStep.objects.get(run=run, key=key).pk}/")
        shot(page, name)
    page.goto(f"{desk.base_url}/")
    expect(page.locator(f'#your-runs .home-run:has(a[href="/runs/{run.pk}/"])')).to_contain_text("Done")
    shot(page, "15-home-with-the-run")


def test_an_analyst_watches_a_quick_run_finish_live_and_reads_its_documents(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    began = time.monotonic()
    company = load_desk_data("AAPL")
    analyst("ana")
    desk = start_desk(desk_factory, quick_script(company), latency_ms=300)
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.add_init_script(RECORD_CARDS)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(f"console: {m.text}") if _unexpected(m) else None)

    run = land_on_the_queued_run(page, desk)
    watch_the_run_finish(page, desk, run)
    follow_a_citation_of_the_fundamentals_brief(page)
    read_the_memo_and_the_other_documents(page, desk, run)

    page.set_viewport_size({"width": 420, "height": 900})  # a phone: the stages stack, nothing overlaps
    page.goto(f"{desk.base_url}/runs/{run.pk}/")
    shot(page, "16-run-narrow")

    assert not problems, problems
    context.close()
    print(f"\ne2e: a quick run watched live and read in {time.monotonic() - began:.1f} s")
