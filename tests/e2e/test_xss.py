"""No script an attacker writes runs in an analyst's browser: not from a model, a news feed or a brief.

A corpus of payloads (tests/e2e/xss_payloads.py) goes into every field an attacker controls: what the
fake model answers (specialist briefs, synthesis iterations, the evaluator's report, even the keys of an
invalid answer, which reach a failed step's error), the news rows the desk stores, and the brief an
analyst types into the real form. Chromium then renders every page, drawer and live update of a full run
while it happens, after a socket reconnect, and in the admin. Each payload would set ``window.__xss`` if
it ran; the page reports any such assignment at once, and any Content-Security-Policy violation too:
legitimate pages must need no help from the policy. Events pushed straight into the run's channel-layer
group, as anyone with Redis access could, must be refused by run.js, with and without the policy.
"""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from agents.memo.schemas import (
    JMINUS_DIMENSIONS,
    JPLUS_DIMENSIONS,
    Analysis,
    Catalyst,
    Claim,
    Divergence,
    Evaluation,
    MemoDraft,
    SpecialistBrief,
    SynthesisIteration,
)
from agents.text.reader import paragraph
from agents.text.scripts import Language
from memos.live.events import run_group
from memos.models import AgentStep, Company, FactRecord, LLMCall, Run, SourceDocument
from memos.pipeline.cards import run_status_html, step_card_html
from memos.pipeline.language import brief_language
from memos.pipeline.memo.evidence import select_evidence
from memos.pipeline.memo.plan import iteration_key
from memos.pipeline.memo.rehearsal import evaluation_answer, iteration_answer
from memos.pipeline.memo.settings import memo_settings
from tests.e2e.conftest import SCREENSHOTS, Desk, e2e_redis_url, start_desk
from tests.e2e.test_run_live import log_in
from tests.e2e.xss_payloads import ID, Payload, Placer, corpus
from tests.memos.injection_payloads import limit as bound
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENSHOTS / "xss"
RUN_TIMEOUT_MS = 60_000
ITERATIONS = 3  # the full profile's
FAILING = "competitive"  # this specialist's answers carry hostile keys: it fails, and the ledger keeps them
# One unknown ticker (looked up in SEC's list), then malformed ones (refused before any lookup, and quoted
# back in the error message); up to 16 characters, the form's limit.
REFUSED_TICKERS = ["ZZZZQ", '"><i>ZZ', "'><b>ZZ", "</textarea><", "<svg/onload=", "{{x}}{%y%}", "&lt;&#60;"]
DOCUMENT_KINDS = ["news"] * 12 + ["filing"] * 6 + ["prediction-market"] * 6 + ["other"] * 6

# Installed before any page script: the flag is a setter that reports at once (in every frame), and every
# policy violation is reported as it happens.
WATCH = """
(() => {
  let flag;
  Object.defineProperty(window, "__xss", {
    configurable: false,
    get() { return flag; },
    set(value) { flag = value; window.__xssReport?.(String(value)); },
  });
  document.addEventListener("securitypolicyviolation", (e) => window.__cspReport?.(
    `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`), true);
})();
"""

# What a page must never contain, whatever it shows, and every payload id it shows as text or attribute.
AUDIT = r"""
(marker) => {
  const bad = [];
  const unsafe = /^[\s\x00-\x20]*(javascript|data|vbscript|blob|file|filesystem):/i;
  const urls = ["href", "src", "action", "formaction", "xlink:href", "data", "background", "poster",
    "srcset"];
  const never = ["iframe", "frame", "frameset", "object", "embed", "applet", "base", "portal", "xss",
    "marquee", "xmp", "listing", "noembed", "noframes", "template", "keygen", "video", "audio", "style"];
  for (const el of document.querySelectorAll("*")) {
    const tag = el.localName;
    // Scripts come from this site only: its static files and the admin's translation catalogue.
    if (tag === "script" && !/^\/[^/]/.test(el.getAttribute("src") || "")) bad.push("inline script");
    if (never.includes(tag)) bad.push(tag);
    if (tag === "meta" && /refresh/i.test(el.getAttribute("http-equiv") || "")) bad.push("meta refresh");
    if (tag === "link" && el.closest("body")) bad.push("link in body");
    if (tag === "img" && !(el.getAttribute("src") || "").startsWith("/static/")) bad.push("img");
    for (const a of el.attributes) {
      if (a.name.startsWith("on") || a.name === "srcdoc") bad.push(`${tag}[${a.name}]`);
      if (urls.includes(a.name) && unsafe.test(a.value)) bad.push(`${tag}[${a.name}=${a.value.slice(0, 30)}`);
    }
  }
  const parts = [document.documentElement.textContent];
  for (const el of document.querySelectorAll("[title], [href], [value]")) {
    parts.push(el.getAttribute("title") || "", el.getAttribute("href") || "", el.getAttribute("value") || "");
  }
  for (const el of document.querySelectorAll("textarea, input")) parts.push(el.value);
  const ids = [...new Set(parts.join(" ").match(/\bxss[a-z]{3}\b/g) || [])];
  const html = document.documentElement.outerHTML;
  return { bad: bad.slice(0, 12), ids, flag: window.__xss === undefined ? null : String(window.__xss),
           marked: marker ? new RegExp(marker).test(html) : false };
}
"""


@dataclass
class Watch:
    """What every page of the test did: scripts that ran, policy violations, errors, and what it showed."""

    executed: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    # Chromium reports an inline handler to the policy as soon as any parser meets one, even in a document
    # with no window (where it can never run): run.js reading a hostile socket event does. Kept apart.
    parse_reports: list[str] = field(default_factory=list)
    hostile: bool = False
    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    laps: dict[str, float] = field(default_factory=dict)
    lapped: float = field(default_factory=time.monotonic)

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps[name], self.lapped = now - self.lapped, now

    def context(self, browser: Browser, **options: Any) -> BrowserContext:
        context = browser.new_context(viewport={"width": 1360, "height": 900}, **options)
        context.expose_binding("__xssReport", lambda source, value: self.executed.append(f"{value}"))
        context.expose_binding("__cspReport", lambda source, text: self._violation(text))
        context.add_init_script(WATCH)
        return context

    def page(self, context: BrowserContext) -> Page:
        page = context.new_page()
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("console", lambda message: self._console(message, page.url))
        return page

    def _violation(self, text: str) -> None:
        # A refused hostile fragment is parsed, in a window-less document, by live.js (run.js's drawer uses
        # the same parser): Chromium reports its inline handlers to the page's policy as the parser meets
        # them.
        parsed = text.startswith("script-src-attr blocked inline at") and (
            "/static/js/live.js:" in text or "/static/js/run.js:" in text
        )
        (self.parse_reports if self.hostile and parsed else self.violations).append(text)

    def _console(self, message: ConsoleMessage, url: str) -> None:
        if self.hostile and "Content Security Policy directive" in message.text:
            return  # the parse-time reports above, as Chromium also logs them
        if message.type == "warning" and "refused a live event" in message.text:
            self.refused.append(message.text)
        if message.type == "warning" and "unsafe part" in message.text:
            self.problems.append(f"run.js had to clean a document: {message.text}")  # the server's own
        # While the test has the server down, each refused reconnect attempt is logged: that is the point.
        refused = "WebSocket connection" in message.text and "ERR_CONNECTION_REFUSED" in message.text
        # The admin's pages name no icon, so the browser asks for /favicon.ico, which this site lacks.
        refused |= message.location.get("url", "").endswith("/favicon.ico")
        if message.type == "error" and not refused:
            self.problems.append(f"console on {url}: {message.text} ({message.location.get('url')})")

    def check(self, page: Page, name: str, expected: Iterable[str] = (), *, shot: bool = False) -> None:
        result = page.evaluate(AUDIT, "")
        self.pages.append(name)
        shown = set(result["ids"])
        self.seen |= shown
        assert result["flag"] is None, f"{name}: a payload ran: window.__xss = {result['flag']}"
        assert not result["bad"], f"{name}: markup no page may contain: {result['bad']}"
        missing = set(expected) - shown
        assert not missing, f"{name}: {len(missing)} payloads not shown as text, e.g. {sorted(missing)[:6]}"
        if shot:
            page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False, animations="disabled")


@dataclass
class Plan:
    """Where the payloads went: the placer's record, and which ids each page must show as text."""

    placer: Placer
    steps: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    documents: dict[str, set[str]] = field(default_factory=dict)
    titles: dict[str, set[str]] = field(default_factory=dict)
    # Each model-written field shown through the prose filter, with the pages that show it.
    prose: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def text(
        self, name: str, limit: int, *prose: str, plain: tuple[str, ...] = (), fallback: str = "plain words"
    ) -> str:
        """Payloads for one model-written field. Pages in ``prose`` show it through the prose filter (which
        removes figures, and with them a payload word that has a digit in it), those in ``plain`` as is."""
        text, ids = self.placer.take(name, limit)
        # What a reader is shown: a sentence with a typed figure in it is withheld whole.
        filtered = "".join(part.text for part in paragraph(text, frozenset()).parts if part.kind == "text")
        for key in prose:
            self.steps[key] |= ids & _ids(filtered)
        if prose:
            self.prose.append((text, prose))
        for key in plain:
            self.steps[key] |= ids
        return text or fallback

    def withhold_other_scripts(self, language: Language) -> None:
        """Once the brief exists: a sentence in another script than the brief's is withheld whole too
        (agents.text.scripts), so its payloads are not on the pages that show the prose."""
        for text, keys in self.prose:
            before = "".join(part.text for part in paragraph(text, frozenset()).parts if part.kind == "text")
            after = paragraph(text, frozenset(), language=language).parts
            withheld = _ids(before) - _ids("".join(part.text for part in after if part.kind == "text"))
            for key in keys:
                self.steps[key] -= withheld


# --- the attacker's material


def hostile_documents(plan: Plan) -> None:
    """News, filings and markets about the company: the newest, so the specialists are shown them."""
    for index, kind in enumerate(DOCUMENT_KINDS, 1):
        title, title_ids = plan.placer.take("news.title", 500)
        source, source_ids = plan.placer.take("news.source", 120)
        text, text_ids = plan.placer.take("news.text", 4000, separator="\n")
        url, url_ids = plan.placer.take("news.url", 960)
        web = index % 2 == 1  # half are web links (shown as one), half are anything at all (shown as text)
        doc_id = f"xss:{kind}-{index:02d}"
        SourceDocument.objects.create(
            doc_id=doc_id,
            kind=kind,
            title=title,
            url=f"https://news.example/?q={url}" if web else url,
            published=date(2031, 1, index),
            source=source,
            # Words the regulatory and macro selectors look for, so these reach every specialist's evidence.
            text=f"Antitrust probe; interest rate and inflation risk.\n{text}",
            tickers=["AAPL"],
        )
        plan.titles[doc_id] = title_ids
        plan.documents[doc_id] = title_ids | source_ids | text_ids | (url_ids if web else set())


def model_answers(plan: Plan, company: Company) -> dict[str, list[object]]:
    """The fake model's answers for a full run: every prose field full of payloads, shapes still valid."""
    roster = memo_settings().profiles["full"].roster
    evidence = select_evidence(company, roster)
    for items in evidence.values():
        for item in items:
            plan.steps["evidence"] |= plan.titles.get(item.evidence_id, set())
    script: dict[str, list[object]] = {}
    cited: list[str] = []
    for name in roster:
        items = evidence[name]
        assert items, f"the {name} specialist has no evidence, so no model would be asked"
        shown: tuple[str, ...] = () if name == FAILING else (name, "audit")
        citations = [items[n % len(items)].evidence_id for n in range(8)]
        claims = [
            {
                "layer": ("MICRO", "MESO", "MACRO")[n % 3],
                "statement": plan.text("claim.statement", bound(Claim, "statement"), *shown),
                "citations": [cid],
                "tier": "HIGH",
            }
            for n, cid in enumerate(citations)
        ]
        shown = shown[:1]
        brief: dict[str, object] = {
            "claims": claims,
            "coverage_gaps": [
                plan.text("coverage_gaps", bound(SpecialistBrief, "coverage_gaps"), *shown)
                for _ in range(bound(SpecialistBrief, "coverage_gaps", items=True))
            ],
            "undercurrents": [
                plan.text("undercurrents", bound(SpecialistBrief, "undercurrents"), *shown)
                for _ in range(bound(SpecialistBrief, "undercurrents", items=True))
            ],
            "evidence_quality": "strong",
        }
        if name == FAILING:
            # Keys a schema forbids: the ledger keeps them; the failed step says only "refused".
            keys = [plan.text("answer keys (ledger)", 300) for _ in range(5)]
            script[f"specialist_{name}"] = [brief | dict.fromkeys(keys, "x")] * 4
            continue
        for cid in citations:
            plan.steps[name] |= plan.titles.get(cid, set())
            cited.append(cid)
        script[f"specialist_{name}"] = [brief] * 2
    documents = [cid for cid in dict.fromkeys(cited) if cid in plan.titles]
    facts = [cid for cid in dict.fromkeys(cited) if cid not in plan.titles]
    load_bearing = (documents[:2] + facts)[:5]
    iterations: list[object] = [synthesis_answer(plan, n, load_bearing) for n in range(1, ITERATIONS + 1)]
    script["synthesizer"] = iterations * 2
    script["evaluator"] = [evaluator_answer(plan)] * 2
    return script


def synthesis_answer(plan: Plan, number: int, load_bearing: list[str]) -> dict[str, Any]:
    answer = iteration_answer(number, load_bearing)  # the rehearsal's scores, which climb as required
    key = iteration_key(number)
    # Which iteration the memo is made from is code's call (the escape valve may stop before the last), so
    # each iteration's memo payloads are noted apart and chosen once the run has ended (settle_the_memo).
    memo = (key, f"memo@{number}")
    answer["analysis"] = {
        layer: plan.text(f"analysis.{layer}", bound(Analysis, layer), *memo)
        for layer in ("macro", "meso", "micro")
    }
    answer["memo"] |= {
        "headline_thesis": plan.text("memo.headline_thesis", bound(MemoDraft, "headline_thesis"), *memo),
        "risk_budget": plan.text("memo.risk_budget", bound(MemoDraft, "risk_budget"), *memo),
        "sizing_rationale": plan.text("memo.sizing_rationale", bound(MemoDraft, "sizing_rationale"), *memo),
        "catalysts": [
            {
                "event": plan.text("catalyst.event", bound(Catalyst, "event"), *memo),
                # After the newest hostile document (2031-01) and within twelve months of it: inside the
                # window code checks (a date outside is re-asked, then dropped).
                "date": "2031-10-30",
                "expected_sign": "positive",
            }
            for _ in range(bound(MemoDraft, "catalysts", items=True))
        ],
        "falsifiers": [
            plan.text("memo.falsifiers", bound(MemoDraft, "falsifiers"), *memo)
            for _ in range(bound(MemoDraft, "falsifiers", items=True))
        ],
    }
    answer["what_i_missed"] = [
        plan.text("what_i_missed", bound(SynthesisIteration, "what_i_missed"), key)
        # As many gaps as the rehearsal's next iteration answers (an unanswered gap is re-asked).
        for _ in answer["what_i_missed"]
    ]
    return answer


def evaluator_answer(plan: Plan) -> dict[str, Any]:
    answer = evaluation_answer(ITERATIONS)
    # Weak grades for every iteration, whichever the escape valve stopped at: the verdict is REVISE (the
    # status line says so in code's words).
    for grade in answer["grades"]:
        grade |= {
            "jplus": dict(zip(JPLUS_DIMENSIONS, (1, 1, 0, 0, 0), strict=True)),
            "jminus": dict(zip(JMINUS_DIMENSIONS, (2, 2, 1, 1, 0), strict=True)),
        }
    answer["divergences"] = [
        {
            "iteration": n % ITERATIONS + 1,
            # One of the rubrics' names (the schema allows nothing else), so no payload can ride on it.
            "dimension": JPLUS_DIMENSIONS[n % len(JPLUS_DIMENSIONS)],
            "quote": plan.text("divergence.quote", bound(Divergence, "quote"), "evaluation"),
            "justification": plan.text(
                "divergence.justification", bound(Divergence, "justification"), "evaluation"
            ),
        }
        for n in range(bound(Evaluation, "divergences", items=True))
    ]
    answer["inflation_diagnosis"] = plan.text(
        "inflation_diagnosis", bound(Evaluation, "inflation_diagnosis"), "evaluation"
    )
    answer["next_run_recommendation"] = plan.text(
        "next_run_recommendation", bound(Evaluation, "next_run_recommendation"), "evaluation", "memo"
    )
    return answer


# --- the browser side


def fill_brief(page: Page, plan: Plan, ticker: str) -> set[str]:
    page.fill("input[name=ticker]", ticker)
    ids: set[str] = set()
    # Limits below the service's (2000, 200, 4000): a browser counts UTF-16 units, the service code points.
    for name, selector, limit in (
        ("brief.question", "textarea[name=question]", 1900),
        ("brief.audience", "input[name=audience]", 190),
        ("brief.notes", "textarea[name=notes]", 3800),
    ):
        text, placed = plan.placer.take(name, limit)
        page.fill(selector, text)
        ids |= placed
    return ids


def refused_briefs(page: Page, plan: Plan, watch: Watch) -> None:
    """The form comes back with the service's error and every field as typed, many times over."""
    page.get_by_role("link", name="New brief").click()
    for attempt, ticker in enumerate(REFUSED_TICKERS, 1):
        shown = fill_brief(page, plan, ticker)
        page.get_by_role("button", name="Start the run").click()
        refusal = "Unknown ticker 'ZZZZQ'" if ticker == "ZZZZQ" else "is not a ticker"
        expect(page.get_by_role("alert")).to_contain_text(refusal)
        watch.check(page, f"brief-refused-{attempt}", shown, shot=attempt == 1)


def start_full_run(page: Page, plan: Plan, watch: Watch) -> Run:
    typed = fill_brief(page, plan, "AAPL")
    page.check("input[name=profile][value=full]")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}/$"))
    run = Run.objects.select_related("brief").get()
    plan.withhold_other_scripts(brief_language(run.brief))
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    # The run page shows the question and the audience in full (the notes only reach the prompts and admin).
    assert _ids(run.brief.question) <= typed
    watch.check(page, "run-queued", _ids(run.brief.question + run.brief.audience))
    return run


def _ids(text: str) -> set[str]:
    return set(ID.findall(text))


def watch_it_run(page: Page, desk: Desk, run: Run, plan: Plan, watch: Watch) -> None:
    page.evaluate("window.__sameDocument = true")
    page.click('li.step[data-key="memo"] a.step-card')  # pending: it must fill in by itself when done
    expect(page.locator("#drawer-body article.doc-unfinished")).to_be_visible()
    desk.start_worker()
    page.wait_for_selector(
        'li.step[data-key="fundamentals"]:not([data-status="pending"])', timeout=RUN_TIMEOUT_MS
    )
    watch.check(page, "run-live-specialists")
    expect(page.locator("#run-status")).to_have_attribute(
        "data-status", "needs_review", timeout=RUN_TIMEOUT_MS
    )
    expect(page.locator("#drawer-body article.doc-memo")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument") is True  # everything above arrived over the socket
    # The status line and the failed card, sent live, carry code's words only; the memo its prose.
    expect(page.locator(f'li.step[data-key="{FAILING}"]')).to_have_attribute("data-status", "failed")
    settle_the_memo(run, plan)
    watch.check(page, "run-live-finished", plan.steps["status"] | plan.steps["memo"], shot=True)
    page.keyboard.press("Escape")


def settle_the_memo(run: Run, plan: Plan) -> None:
    """The memo shows the last iteration that ran; an iteration the escape valve skipped shows nothing."""
    done = AgentStep.objects.filter(run=run, kind="iteration", status=AgentStep.Status.DONE)
    final = max(int(key.rsplit("-", 1)[-1]) for key in done.values_list("key", flat=True))
    plan.steps["memo"] |= plan.steps[f"memo@{final}"]
    for number in range(final + 1, ITERATIONS + 1):
        plan.steps[iteration_key(number)] = set()


def reconnect(page: Page, desk: Desk, plan: Plan, watch: Watch) -> None:
    desk.stop_server()
    expect(page.locator("#live")).to_have_attribute("data-state", "off")
    desk.start_server()
    expect(page.locator("#live")).to_have_attribute("data-state", "live", timeout=RUN_TIMEOUT_MS)
    watch.check(page, "run-after-reconnect", plan.steps["status"])


def send_to_group(run: Run, events: list[object]) -> None:
    """What anyone with access to Redis can do: put messages in the run's group, as the pipeline does."""

    async def send() -> None:
        layer = RedisChannelLayer(hosts=[e2e_redis_url()])
        for event in events:
            await layer.group_send(run_group(run.pk), {"type": "run.event", "event": event})
        await layer.close_pools()

    # Playwright's sync API keeps an event loop in this thread: the layer gets a loop of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, send()).result()


def hostile_events(run: Run, marker: str) -> list[object]:
    """Markup that would run if run.js inserted what it receives; each carries ``marker``."""

    def js(n: int) -> str:
        return f"window.__xss=/{marker}{n:02d}/.source"

    step = AgentStep.objects.get(run=run, key="fundamentals")
    card, status = step_card_html(step, run), run_status_html(run)
    run_id, target = str(run.pk), f"step-{step.pk}"

    def agent(html: str, *, to: str = target, kind: str = "agent", run_of: str = run_id) -> dict[str, str]:
        return {"kind": kind, "run_id": run_of, "target": to, "html": html}

    title = '<span class="step-title">'
    return [
        agent(card.replace(title, f"{title}<img src=x onerror={js(1)}>")),
        agent(card.replace(title, f'{title}<iframe srcdoc="<script>{js(2)}</script>"></iframe>')),
        agent(card.replace(title, f"{title}<svg><script>{js(3)}</script></svg>")),
        agent(card.replace('href="/runs/', f'href="javascript:{js(4)}" data-x="/runs/')),
        agent(card.replace('class="step-card"', f'class="step-card" onmouseover="{js(5)}"')),
        agent(card + f"<img src=x onerror={js(6)}>"),
        agent(card.replace(title, f'{title}<noscript><p title="</noscript><img src=x onerror={js(7)}>">')),
        agent(
            card.replace(title, f"<img src=x onerror={js(8)}>{title}"),
            run_of="00000000-0000-0000-0000-000000000000",
        ),
        agent(f'<li class="step" id="step-999999"><img src=x onerror={js(9)}></li>', to="step-999999"),
        agent(
            f'<div class="drawer-body" id="drawer-body"><img src=x onerror={js(10)}></div>', to="drawer-body"
        ),
        agent(
            f'<div id="drawer-body"><article class="doc"><svg onload={js(11)}>',
            to="drawer-body",
            kind="document",
        ),
        agent(
            status.replace("</div>", f"<script>{js(12)}</script><img src=x onerror={js(12)}></div>", 1),
            to="run-status",
            kind="status",
        ),
        agent(
            f'<div class="run-status" id="run-page"><img src=x onerror={js(13)}></div>',
            to="run-page",
            kind="status",
        ),
        f"<img src=x onerror={js(14)}>",
    ]


def inject_into_the_channel(page: Page, run: Run, watch: Watch, marker: str) -> int:
    """Hostile events are refused whole and leave no trace; a genuine one sent after them still lands."""
    events = hostile_events(run, marker)
    step = AgentStep.objects.get(run=run, key="fundamentals")
    step.title = "Fundamentals (a genuine event sent after the hostile ones)"  # not saved
    genuine = {
        "kind": "agent",
        "run_id": str(run.pk),
        "target": f"step-{step.pk}",
        "html": step_card_html(step, run),
    }
    refused_before, executed_before = len(watch.refused), len(watch.executed)
    watch.hostile = True
    send_to_group(run, [*events, genuine])
    control = f"#step-{step.pk} .step-title"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
        len(watch.refused) - refused_before < len(events)
        or page.evaluate("(css) => document.querySelector(css)?.textContent", control) != step.title
    ):
        page.wait_for_timeout(50)
    watch.hostile = False
    assert len(watch.executed) == executed_before, f"hostile socket events ran: {watch.executed}"
    inserted = page.evaluate(AUDIT, marker + r"\d\d")["marked"]
    assert not inserted, "a hostile socket event's markup was inserted into the page"
    assert len(watch.refused) - refused_before == len(events), watch.refused[refused_before:]
    expect(page.locator(control)).to_have_text(step.title)  # the same channel still delivers a genuine one
    watch.check(page, f"run-after-hostile-events-{marker}")
    return len(events)


def read_every_document(page: Page, run: Run, plan: Plan, watch: Watch) -> None:
    for step in run.steps.order_by("position", "key"):
        page.click(f'li.step[data-key="{step.key}"] a.step-card')
        expect(page.locator(f'#drawer-body article[data-step="{step.pk}"]')).to_be_visible()
        watch.check(page, f"drawer-{step.key}", plan.steps[step.key], shot=step.key in ("news", "evaluation"))
        page.keyboard.press("Escape")


def read_every_page(page: Page, desk: Desk, run: Run, plan: Plan, watch: Watch) -> None:
    for step in run.steps.order_by("position", "key"):
        page.goto(f"{desk.base_url}{reverse('run_step', args=[run.pk, step.pk])}")
        watch.check(page, f"page-{step.key}", plan.steps[step.key], shot=step.key == "memo")
    fact = FactRecord.objects.filter(fact_id__in=_cited_facts(run)).first()
    assert fact is not None
    page.goto(f"{desk.base_url}{reverse('fact', args=[fact.fact_id])}")
    watch.check(page, "fact")
    for doc_id, ids in plan.documents.items():
        page.goto(f"{desk.base_url}{reverse('source_document', args=[doc_id])}")
        watch.check(page, f"source-{doc_id}", ids, shot=doc_id.endswith("-01"))
    page.goto(f"{desk.base_url}/")
    row = page.locator(f'#your-runs .home-run:has(a[href="/runs/{run.pk}/"])')
    expect(row).to_contain_text("Needs review")
    watch.check(page, "home-with-the-run", shot=True)


def _cited_facts(run: Run) -> list[str]:
    output = AgentStep.objects.get(run=run, key="fundamentals").output or {}
    return [cid for claim in output.get("claims", []) for cid in claim["citations"]]


def read_the_admin(page: Page, desk: Desk, run: Run, plan: Plan, watch: Watch) -> None:
    page.goto(f"{desk.base_url}/admin/login/?next=/admin/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", "root-secret-pass")
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(r"/admin/$"))
    brief = run.brief
    calls = [
        LLMCall.objects.filter(run=run, role=FAILING).order_by("created_at").first(),
        LLMCall.objects.filter(run=run, role="news").first(),
        LLMCall.objects.filter(run=run, role="synthesizer").order_by("-created_at").first(),
        LLMCall.objects.filter(run=run, role="evaluator").first(),
    ]
    pages: list[tuple[str, str, set[str]]] = [
        ("admin-documents", reverse("admin:memos_sourcedocument_changelist"), set()),
        ("admin-briefs", reverse("admin:memos_brief_changelist"), set()),
        (
            "admin-brief",
            reverse("admin:memos_brief_change", args=[brief.pk]),
            _ids(brief.question + brief.audience + brief.notes),
        ),
        ("admin-runs", reverse("admin:memos_run_changelist"), set()),
        ("admin-run", reverse("admin:memos_run_change", args=[run.pk]), _ids(run.status_message)),
        ("admin-llm-calls", reverse("admin:memos_llmcall_changelist"), set()),
    ]
    pages += [
        (f"admin-llm-call-{c.role}", reverse("admin:memos_llmcall_change", args=[c.pk]), _ids(c.raw_response))
        for c in calls
        if c
    ]
    for doc_id in list(plan.documents)[::7]:
        document = SourceDocument.objects.get(doc_id=doc_id)
        pages.append(
            (
                f"admin-document-{doc_id}",
                reverse("admin:memos_sourcedocument_change", args=[document.pk]),
                _ids(document.title + document.source + document.text + document.url),
            )
        )
    for name, url, expected in pages:
        page.goto(f"{desk.base_url}{url}")
        watch.check(page, name, expected, shot=name in ("admin-brief", "admin-llm-call-competitive"))


# --- the positive control: the same detector, on a page that does not escape


def control_payloads() -> list[Payload]:
    """One payload of each way in that needs no click: a script element, a frame, two event handlers. In
    this order: markup after an unclosed ``<svg`` is SVG, where an iframe is no frame."""
    wanted = [
        "<script>window.__xss=/{}/.source</script>",
        '<iframe srcdoc="<script>window.__xss=/{}/.source</script>"></iframe>',
        "<img src=x onerror=window.__xss=/{}/.source>",
        "<svg onload=window.__xss=/{}/.source>",
    ]
    chosen = {form: p for p in corpus() for form in wanted if p.text == form.format(p.pid)}
    assert set(chosen) == set(wanted), sorted(chosen)
    return [chosen[form] for form in wanted]


@dataclass(frozen=True)
class Unescaped:
    status: int
    headers: dict[str, str]
    body: bytes

    def serve_at(self, page: Page, url: str) -> None:
        """``page`` gets this instead of the desk's answer for ``url`` (and only for it)."""
        page.route(
            lambda address: address == url,
            lambda route: route.fulfill(status=self.status, headers=self.headers, body=self.body),
        )


def unescaped(user: User, path: str) -> Unescaped:
    """``path`` as the desk's own view and template render it for ``user``, with autoescape switched off
    (in this process only): what a page would be if its escaping were lost. Its headers, the policy
    included, are the real ones."""
    templates: list[dict[str, Any]] = copy.deepcopy(settings.TEMPLATES)
    for engine in templates:
        engine["OPTIONS"]["autoescape"] = False
    with override_settings(TEMPLATES=templates):
        client = Client()
        client.force_login(user)
        response = client.get(path)
    return Unescaped(response.status_code, dict(response.items()), response.content)


def test_the_detector_sees_a_payload_run_on_a_page_whose_escaping_is_switched_off(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    payloads = control_payloads()
    ids = {p.pid for p in payloads}
    ana = analyst("ana")
    text = " ".join(p.text for p in payloads)
    SourceDocument.objects.create(
        doc_id="xss:control", kind="news", title=text, source="wire", text=text, published=date(2031, 1, 1)
    )
    path = reverse("source_document", args=["xss:control"])
    desk = start_desk(desk_factory, {}, latency_ms=0)
    url = f"{desk.base_url}{path}"
    control = unescaped(ana, path)
    assert control.status == 200 and "Content-Security-Policy" in control.headers

    # The desk's page, escaped: every payload shown as text, nothing run, nothing for the policy to stop.
    watch = Watch()
    context = watch.context(browser)
    page = watch.page(context)
    log_in(page, desk, "ana", "ana-secret-pass")
    page.goto(url)
    watch.check(page, "control-escaped", ids)
    assert not watch.executed and not watch.violations, (watch.executed, watch.violations)

    # The same page unescaped, served at the same address with the same policy: the policy stops the
    # payloads, the detector hears it, and the page's audit finds the markup.
    control.serve_at(page, url)
    page.goto(url)
    with pytest.raises(AssertionError, match="markup no page may contain"):
        watch.check(page, "control-unescaped")
    assert watch.violations and not watch.executed, (watch.violations, watch.executed)
    context.close()

    # Without the policy, the payloads run, and the detector names every one of them.
    watch = Watch()
    context = watch.context(browser, bypass_csp=True)
    page = watch.page(context)
    control.serve_at(page, url)
    page.goto(url)
    expect(page.locator("h2 svg")).to_have_count(1)  # the unescaped title is markup now
    deadline = time.monotonic() + 10
    while not ids <= set(watch.executed) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert set(watch.executed) >= ids, f"the detector missed payloads that ran: {ids - set(watch.executed)}"
    with pytest.raises(AssertionError, match="a payload ran"):
        watch.check(page, "control-unescaped-no-csp")
    context.close()


def test_no_payload_runs_in_any_page_drawer_or_live_update(
    browser: Browser, desk_factory: list[Desk]
) -> None:
    began = time.monotonic()
    watch = Watch()
    SHOTS.mkdir(parents=True, exist_ok=True)
    payloads = corpus()
    plan = Plan(Placer(payloads))
    company = load_desk_data("AAPL")
    analyst("ana")
    User.objects.create_superuser("root", password="root-secret-pass")
    hostile_documents(plan)
    watch.lap("data")
    desk = start_desk(desk_factory, model_answers(plan, company), latency_ms=20)
    watch.lap("desk")
    socket_events = 0

    context = watch.context(browser)
    page = watch.page(context)
    page.goto(f"{desk.base_url}/")
    watch.check(page, "landing")
    page.goto(f"{desk.base_url}/accounts/login/")
    watch.check(page, "login")
    log_in(page, desk, "ana", "ana-secret-pass")
    watch.check(page, "home-empty")
    refused_briefs(page, plan, watch)
    watch.lap("briefs")
    run = start_full_run(page, plan, watch)
    watch_it_run(page, desk, run, plan, watch)
    watch.lap("run")
    reconnect(page, desk, plan, watch)
    watch.lap("reconnect")
    socket_events += inject_into_the_channel(page, run, watch, "sock")
    watch.lap("socket")
    read_every_document(page, run, plan, watch)
    watch.lap("drawers")
    read_every_page(page, desk, run, plan, watch)
    watch.lap("pages")
    context.close()

    # The socket again with the policy switched off: run.js alone must refuse what it is sent. (The pages
    # need no such pass: a handler, script or frame reaching any of them would have been reported to the
    # policy, and the audit of every page finds anything else, javascript: links included.)
    context = watch.context(browser, bypass_csp=True)
    page = watch.page(context)
    log_in(page, desk, "ana", "ana-secret-pass")
    page.goto(f"{desk.base_url}{reverse('run', args=[run.pk])}")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    watch.check(page, "no-csp-run")
    socket_events += inject_into_the_channel(page, run, watch, "nocsp")
    context.close()
    watch.lap("no-csp")

    context = watch.context(browser)
    page = watch.page(context)
    read_the_admin(page, desk, run, plan, watch)
    context.close()
    watch.lap("admin")

    placed = plan.placer.placed
    unplaced = {p.pid for p in payloads} - set().union(*placed.values())
    unseen = {p.pid for p in payloads} - watch.seen
    figures = (
        f"{len(payloads)} payloads x {len(placed)} fields ({sum(map(len, placed.values()))} placements; "
        f"fewest per field {min(map(len, placed.values()))}), {len(watch.pages)} pages rendered, "
        f"{socket_events} hostile socket events refused, {len(watch.executed)} executed, "
        f"{len(watch.violations)} CSP violations ({len(watch.parse_reports)} parse-time reports of refused "
        f"socket events), in {time.monotonic() - began:.1f} s"
    )
    per_field = ", ".join(f"{name} {len(ids)}" for name, ids in sorted(placed.items()))
    print(f"\nxss: {figures}\nxss: payloads per field: {per_field}")
    print("xss: seconds: " + ", ".join(f"{name} {s:.1f}" for name, s in watch.laps.items()))
    assert not watch.executed, f"payloads ran: {watch.executed[:10]} ({figures})"
    assert not watch.violations, f"the policy had to stop something: {watch.violations[:5]}"
    assert not watch.problems, watch.problems[:10]
    assert len(payloads) >= 200 and not unplaced, unplaced
    assert not unseen, f"payloads never shown as text: {sorted(unseen)[:10]}"
