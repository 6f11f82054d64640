"""The brief form, the run page, step documents, fact and document pages, and the socket's re-sync."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import strip_tags

from agents.data.formatting import format_value
from memos.models import AgentStep, Brief, FactRecord, Run, SourceDocument
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from memos.views.run_socket import RunConsumer
from tests.memos.factories import company, revenue_fact, run_for
from tests.memos.pipeline_support import analyst, evidence_of, fake_llm, load_desk_data, script_for

QUESTION = "Should the committee add to the position ahead of the next product cycle?"
FRAGMENT = {"X-Desk-Fragment": "1"}


def text_of(html: str) -> str:
    """What a reader sees: tags gone, whitespace collapsed."""
    return re.sub(r"\s+", " ", strip_tags(html))


def form(**overrides: str) -> dict[str, str]:
    return {
        "ticker": "AAPL",
        "question": QUESTION,
        "audience": "",
        "notes": "",
        "profile": "quick",
    } | overrides


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The stages queued for a worker; no worker runs in these tests."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: calls.append((run_id, stage)))
    return calls


# --- the brief form


@pytest.mark.django_db
def test_an_analyst_starts_a_run_and_lands_on_its_page_with_every_step_pending(
    client: Client,
    alice: User,
    enqueued: list[tuple[str, str]],
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    company()
    client.force_login(alice)
    assert client.get("/briefs/new/").status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/briefs/new/", form(notes="Focus on services."))

    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert run.brief.owner == alice and run.brief.notes == "Focus on services." and run.profile == "quick"
    assert run.brief.audience == "Investment committee"
    assert enqueued == [(str(run.pk), "data")]
    page = client.get(response["Location"]).content.decode()
    for step in run.steps.all():
        assert f'id="step-{step.pk}"' in page
        assert f'href="/runs/{run.pk}/steps/{step.pk}/"' in page
    assert page.count('data-status="pending"') == run.steps.count() == 8
    assert "quick profile" in page and "0 tokens" in page and "js/run.js" in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"ticker": "zzzzq"}, "Unknown ticker &#x27;ZZZZQ&#x27;: it is not in SEC&#x27;s company list."),
        ({"question": "   "}, "The brief needs a question: what should the memo answer?"),
        ({"ticker": ""}, "Enter a ticker."),
    ],
)
def test_a_refused_brief_shows_the_reason_and_creates_nothing(
    client: Client, alice: User, enqueued: list[tuple[str, str]], fields: dict[str, str], message: str
) -> None:
    company()
    client.force_login(alice)
    page = client.post("/briefs/new/", form(**fields))
    assert page.status_code == 200
    assert message in page.content.decode()
    assert not Brief.objects.exists() and not Run.objects.exists() and not enqueued


@pytest.mark.django_db
def test_submitting_the_same_brief_while_its_run_is_queued_is_refused(
    client: Client, alice: User, enqueued: list[tuple[str, str]]
) -> None:
    company()
    client.force_login(alice)
    assert client.post("/briefs/new/", form()).status_code == 302
    again = client.post("/briefs/new/", form())
    assert again.status_code == 200
    assert "A run of this brief is already queued or running" in again.content.decode()
    assert Brief.objects.count() == 1 and Run.objects.count() == 1


@pytest.mark.django_db
def test_only_analysts_may_write_briefs(client: Client, alice: User, bob: User) -> None:
    assert client.get("/briefs/new/")["Location"].startswith("/accounts/login/")
    client.force_login(bob)
    assert client.get("/briefs/new/").status_code == 403
    assert client.post("/briefs/new/", form()).status_code == 403
    assert b"New brief" not in client.get("/").content
    client.force_login(alice)
    assert b'href="/briefs/new/"' in client.get("/").content


# --- who sees a run


@pytest.mark.django_db
def test_another_analysts_run_and_its_documents_are_not_found(client: Client, alice: User, bob: User) -> None:
    run = run_for(alice)
    step = AgentStep.objects.create(run=run, stage="memo", key="memo", kind="memo", title="Investment memo")
    client.force_login(analyst("dave"))
    assert client.get(f"/runs/{run.pk}/").status_code == 404
    assert client.get(f"/runs/{run.pk}/steps/{step.pk}/").status_code == 404
    assert client.get(f"/runs/{run.pk}/steps/{step.pk}/", headers=FRAGMENT).status_code == 404
    client.force_login(bob)  # the committee reads every run
    assert client.get(f"/runs/{run.pk}/steps/{step.pk}/").status_code == 200
    other = run_for(alice, company("MSFT", "Microsoft", 789019))
    assert client.get(f"/runs/{other.pk}/steps/{step.pk}/").status_code == 404  # a step of another run


# --- documents built from a real run


def _finished_run(profile: str, edit: Callable[[dict[str, list[Any]], Run], None] | None = None) -> Run:
    """A run of the real pipeline against the fake OpenAI-compatible server, its script edited first."""
    load_desk_data("AAPL")
    user = analyst("ana")
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    run = start_run(brief=brief, user=user, profile=profile, enqueue=False, workflow="memo")
    script = script_for(run)
    if edit is not None:
        edit(script, run)
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    return run


def _document(client: Client, run: Run, key: str) -> str:
    step = AgentStep.objects.get(run=run, key=key)
    client.force_login(run.created_by)
    fragment = client.get(f"/runs/{run.pk}/steps/{step.pk}/", headers=FRAGMENT)
    assert fragment.status_code == 200 and "X-Desk-Fragment" in fragment["Vary"]
    html = fragment.content.decode()
    assert "<html" not in html and f'data-step="{step.pk}"' in html
    full = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "<html" in full and f'data-step="{step.pk}"' in full
    return html


@pytest.mark.django_db(transaction=True)
def test_every_document_of_a_full_run_renders_from_what_the_pipeline_stored(client: Client) -> None:
    run = _finished_run("full")

    evidence = text_of(_document(client, run, "evidence"))
    assert (
        "Fundamentals" in evidence and "Regulatory" in evidence and "none: nothing to ask about" in evidence
    )

    fundamentals = _document(client, run, "fundamentals")
    claim = AgentStep.objects.get(run=run, key="fundamentals").output["claims"][0]  # type: ignore[index]
    cited = claim["citations"][0]
    assert f'href="/facts/{cited}/"' in fundamentals
    assert '<span class="tier tier-HIGH"' in fundamentals
    assert all(layer in fundamentals for layer in ("MACRO", "MESO", "MICRO"))
    assert "Coverage gaps" in fundamentals and "Undercurrents" in fundamentals

    news = _document(client, run, "news")
    assert '<span class="tier tier-LOW"' in news and 'class="claim claim-LOW"' in news
    assert 'href="/sources/news:' in news

    assert "no evidence: not asked" in _document(client, run, "regulatory")

    audit = text_of(_document(client, run, "audit"))
    assert "Contradictions" in audit and "HIGH" in audit and "claims after merging" in audit

    iteration = _document(client, run, "iteration-2")
    iteration_text = text_of(iteration)
    assert "dJ+" in iteration_text and "passed" in iteration_text and "What I missed" in iteration_text
    assert "Headline thesis" in iteration_text and "Total" in iteration_text and "/10" in iteration_text

    evaluation = text_of(_document(client, run, "evaluation"))
    assert "ACCEPT" in evaluation and "Inflation" in evaluation and "+2" in evaluation
    assert "cash generation funds a cycle the market discounts" in evaluation and "quote found" in evaluation
    assert "Name the consensus view explicitly" in evaluation
    assert "Self-scores run about two points high" in evaluation

    memo = text_of(_document(client, run, "memo"))
    assert "BUY" in memo and "Load-bearing evidence" in memo and "Falsifiers" in memo
    # The rehearsal dates its catalyst three months after the data's as-of date (the newest 10-Q's filing).
    catalyst = AgentStep.objects.get(run=run, key="memo").output["catalysts"][0]  # type: ignore[index]
    assert catalyst["date"] in memo and "positive" in memo and "Evaluator's verdict" in memo
    assert "the data's as-of date" in memo and "12-month horizon" in memo

    page = client.get(f"/runs/{run.pk}/").content.decode()
    # Iteration 3 was not needed (the escape valve): skipped, every other step done.
    assert page.count('class="step step-done"') == AgentStep.objects.filter(run=run).count() - 1
    assert page.count('class="step step-skipped"') == 1 and "met the thresholds" in page


def _revenue_id(run: Run) -> str:
    ids = [item.evidence_id for item in evidence_of(run)["fundamentals"] if item.metric == "revenue"]
    return ids[0]


@pytest.mark.django_db(transaction=True)
def test_model_prose_shows_fact_values_from_the_store_removed_numbers_and_escaped_markup(
    client: Client,
) -> None:
    def edit(script: dict[str, list[Any]], run: Run) -> None:
        fact_id = _revenue_id(run)
        script["specialist_fundamentals"][0]["claims"][0] = {
            "layer": "MICRO",
            "statement": f"Revenue reached [[{fact_id}]] <script>alert('x')</script>. It grew 12% a year.",
            "citations": [fact_id],
            "tier": "HIGH",
        }

    run = _finished_run("quick", edit)
    fact = FactRecord.objects.get(fact_id=_revenue_id(run))
    html = _document(client, run, "fundamentals")
    assert (
        f'<a class="fact-ref" href="/facts/{fact.fact_id}/" title="{fact.fact_id} · {fact.label}">'
        f"{format_value(fact.value, fact.unit)}</a>"
    ) in html
    # The sentence with a typed figure is withheld whole, one line of code's at the paragraph's end says so;
    # none of it is shown.
    assert "(Code withheld a sentence of this paragraph: it stated a percentage the model typed" in html
    assert "12%" not in html and "grew" not in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


@pytest.mark.django_db(transaction=True)
def test_a_buy_resting_on_a_news_item_is_shown_downgraded_to_watch_by_code(client: Client) -> None:
    def edit(script: dict[str, list[Any]], run: Run) -> None:
        news_id = evidence_of(run)["news"][0].evidence_id
        for answer in script["synthesizer"]:
            answer["memo"]["load_bearing"] = [news_id, *answer["memo"]["load_bearing"][:1]]

    run = _finished_run("quick", edit)
    memo = text_of(_document(client, run, "memo"))
    assert "BUY → WATCH" in memo
    assert "(downgraded by code: BUY rested on LOW-tier evidence" in memo
    assert "LOW-tier evidence cannot carry a BUY or SELL" in memo
    card = text_of(client.get(f"/runs/{run.pk}/").content.decode())
    assert "BUY → WATCH" in card


# --- evidence pages


@pytest.mark.django_db
def test_a_fact_page_shows_the_filing_it_came_from(client: Client, alice: User) -> None:
    fact = revenue_fact(company())
    assert client.get(f"/facts/{fact.fact_id}/")["Location"].startswith("/accounts/login/")
    client.force_login(alice)
    page = client.get(f"/facts/{fact.fact_id}/").content.decode()
    assert "USD 391,035 M" in page and "391035000000" in page
    assert "0000320193-24-000123" in page and "10-K" in page and "2024-11-01" in page
    assert "RevenueFromContractWithCustomerExcludingAssessedTax" in page
    assert f'href="{fact.url}" rel="noopener noreferrer nofollow"' in page
    # Its fiscal year as its id spells it (the page once said "FY2024 FY").
    assert " · FY2024</dd>" in page and "FY2024 FY" not in page
    assert client.get("/facts/AAPL:revenue:FY1999/").status_code == 404


@pytest.mark.django_db
def test_a_source_documents_untrusted_text_and_link_are_defused(client: Client, alice: User) -> None:
    SourceDocument.objects.create(
        doc_id="news:feedfacecafe",
        kind="news",
        title="<img src=x onerror=alert(1)> Apple",
        url="javascript:alert(1)",
        source="Wire",
        text="Line one\n<script>alert('doc')</script>",
    )
    SourceDocument.objects.create(
        doc_id="news:0123456789ab", kind="news", title="Plain", url="https://example.org/a", source="Wire"
    )
    client.force_login(alice)
    page = client.get("/sources/news:feedfacecafe/").content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;doc&#x27;)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt; Apple" in page
    assert "javascript:" not in page and "no web link" in page
    plain = client.get("/sources/news:0123456789ab/").content.decode()
    assert '<a class="out" href="https://example.org/a" rel="noopener noreferrer nofollow">' in plain


# --- the socket


@pytest.mark.django_db(transaction=True)
async def test_a_connecting_page_receives_the_status_and_every_step_card(alice: User) -> None:
    def planned_run() -> tuple[Run, list[int]]:
        company()
        run = start_run(
            brief=create_brief(owner=alice, ticker="AAPL", question=QUESTION),
            user=alice,
            enqueue=False,
            workflow="memo",
            profile="full",
        )
        AgentStep.objects.filter(run=run, key="evidence").update(status="done", output={"specialists": {}})
        return run, list(run.steps.values_list("pk", flat=True))

    run, step_ids = await sync_to_async(planned_run)()
    socket = WebsocketCommunicator(RunConsumer.as_asgi(), f"/ws/runs/{run.pk}/")
    socket.scope["user"] = alice
    socket.scope["url_route"] = {"kwargs": {"run_id": run.pk}}
    connected, _ = await socket.connect()
    assert connected
    status = await socket.receive_json_from(timeout=5)
    cards = [await socket.receive_json_from(timeout=5) for _ in step_ids]
    assert status["kind"] == "status" and status["target"] == "run-status"
    assert {card["target"] for card in cards} == {f"step-{pk}" for pk in step_ids}
    assert all(card["kind"] == "agent" and f'id="{card["target"]}"' in card["html"] for card in cards)
    evidence = next(card for card in cards if 'data-key="evidence"' in card["html"])
    assert 'data-status="done"' in evidence["html"]
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


@pytest.mark.django_db
def test_the_run_page_shows_the_token_budget_a_run_started_with(
    client: Client, alice: User, enqueued: list[tuple[str, str]]
) -> None:
    from django.test import override_settings

    from agents.llm.config import DEFAULT_RUN_BUDGET_TOKENS, load_llm_settings

    brief = Brief.objects.create(company=company(), question=QUESTION, owner=alice)
    with override_settings(LLM_SETTINGS=load_llm_settings({})):  # LLM_RUN_BUDGET_TOKENS unset
        run = start_run(brief=brief, user=alice, profile="quick", enqueue=False, workflow="memo")
    assert run.budget_tokens == DEFAULT_RUN_BUDGET_TOKENS
    client.force_login(alice)
    page = text_of(client.get(f"/runs/{run.pk}/").content.decode())
    assert f"0 tokens of its {DEFAULT_RUN_BUDGET_TOKENS:,}-token budget" in page
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, budget_tokens=None)
    assert "0 tokens (no budget)" in text_of(client.get(f"/runs/{run.pk}/").content.decode())
