"""A deck run on the fake server reads like a board deck: a title slide, the executive summary with the
recommendation and its reasons, one slide per section with figures no other slide shows, the bridge and
revenue by line, the risks (quoting the brief's memo), what to watch (the memo's thesis and catalysts) and
the sources. An escalated run says on its page what it missed and what the analyst can do."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from agents.data.edgar import segment_facts_from_inline_xbrl
from agents.data.edgar.segments import is_segment
from agents.deck.assign import assign, bridge_ids
from agents.deck.outputs import DeckOutput
from agents.deck.spec import Chart
from memos.models import ArtefactVersion, Company, FactRecord, Run
from memos.pipeline import driver
from memos.pipeline.deck.data import deck_facts, figure_of
from memos.pipeline.fact_store import save_facts
from memos.services.runs import start_run
from tests.agents.data import SNAPSHOT
from tests.memos.deck_support import deck_run, fake_deck_llm
from tests.memos.pipeline_support import analyst, finished_run, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

FIGURE_ID = re.compile(r"^- (\S+): ", re.MULTILINE)


def offered(request: dict[str, Any]) -> set[str]:
    """The fact ids a drafter's prompt offered."""
    user = next(m["content"] for m in request["body"]["messages"] if m["role"] == "user")
    return set(
        FIGURE_ID.findall(user.split("Figures you may place")[1].split("Code's part of this slide")[0])
    )


def test_a_deck_opens_with_its_title_and_summary_and_ends_with_risks_and_sources() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    memo_run = finished_run(owner)
    memo = ArtefactVersion.objects.get(run=memo_run)
    run = start_run(brief=memo_run.brief, user=owner, profile="quick", workflow="deck", enqueue=False)
    with fake_deck_llm() as server:
        driver.run_inline(str(run.pk))
        drafted = [r for r in server.requests if r["prompt_name"] == "deck_drafter"]
        framing = [r for r in server.requests if r["prompt_name"] == "deck_framing"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    deck = DeckOutput.model_validate(ArtefactVersion.objects.get(run=run).content).deck

    kinds = [slide.kind for slide in deck.slides]
    # The fake scope's "Risks" section is answered by code's risks slide: it is not drafted again.
    assert kinds == ["title", "summary", *["section"] * 4, "risks", "watch", "sources"]
    cover, summary = deck.slides[0], deck.slides[1]
    assert cover.title == deck.title and cover.takeaway == deck.thesis
    assert summary.title == "Hold the position and review it after the next annual filing"
    # Each reason cites its figure; the fake's reasons name metrics in a fixed order ("the filed revenue
    # record") over whichever figure comes first, and a reason naming a metric it does not cite gives way to
    # code's words over the figure and the year before ("Capital expenditure rose in FY2025").
    assert len(summary.bullets) == 3 and all(1 <= len(b.figures) <= 2 for b in summary.bullets)
    assert all(b.text for b in summary.bullets)

    # Each section's drafter was offered figures no other section was: no table or chart can repeat.
    sets = [offered(request) for request in drafted]
    assert len(sets) == 4 and all(sets)
    assert all(not (a & b) for i, a in enumerate(sets) for b in sets[i + 1 :])
    shown = [
        tuple(f.fact_id for f in part)
        for slide in deck.slides
        for part in (slide.table.rows if slide.table else (), slide.chart.points if slide.chart else ())
        if part
    ]
    assert len(shown) == len(set(shown))

    bridges = [s.chart for s in deck.slides if s.chart is not None and s.chart.kind == "bridge"]
    [bridge], [moved] = [c for c in bridges if not c.adds], [c for c in bridges if c.adds]
    # What moved net income on the year, on the slide that owns earnings: its steps land on the total.
    assert moved.title.startswith("What moved net income from FY")
    assert moved.points[-1].fact_id.split(":")[1] == "net_income"
    assert [p.fact_id.split(":")[1] for p in bridge.points][:3] == [
        "revenue",
        "cost_of_revenue",
        "gross_profit",
    ]

    # The memo's recommendation reached the framing; a falsifier is quoted on the risks slide.
    recommendation = memo.content["firewall"]["final"]
    prompt = next(m["content"] for m in framing[0]["body"]["messages"] if m["role"] == "user")
    assert f"The brief's latest memo (memo v{memo.number}) recommends {recommendation}" in prompt
    risks = deck.slides[-3]
    assert any(b.text.startswith(f"The memo v{memo.number} would be wrong if:") for b in risks.bullets)
    assert any(b.text.startswith("The shares move") and "the market" in b.text for b in risks.bullets)
    # The memo's thesis and its dated catalysts, quoted by code on the "what to watch" slide.
    watch = deck.slides[-2]
    catalysts = memo.content["catalysts"] or memo.content["memo"]["catalysts"]
    assert watch.title.startswith(f"The memo v{memo.number} expects")
    assert any(b.text.startswith("The thesis: ") for b in watch.bullets)
    assert any(b.text.startswith(f"By {catalysts[0]['date']}, expected to") for b in watch.bullets)
    sources = deck.slides[-1]
    assert sources.bullets and sources.bullets[0].text.startswith("SEC EDGAR, 10-")
    assert not sources.figures()


def test_revenue_by_line_from_the_inline_filing_is_drawn_by_code_on_the_growth_slide() -> None:
    """Apple's 10-Q tags its Products subtotal beside iPhone, Mac, iPad and Wearables: the deck shows the
    finest lines that add up to the quarter's filed revenue, largest first, labelled by line."""
    company = load_desk_data("AAPL")
    filed = SNAPSHOT / "edgar" / "filings" / "aapl-10-q-2025-08-01.html.gz"
    save_facts(company=company, facts=segment_facts_from_inline_xbrl(filed.read_bytes(), ticker="AAPL"))
    chosen = [fact.fact_id for fact in deck_facts(company)]
    lines = [i for i in chosen if is_segment(i)]
    assert [i.split(":")[1] for i in lines] == [
        "revenue_product_iphone",
        "revenue_product_service",
        "revenue_product_mac",
        "revenue_product_wearables_home_and_accessories",
        "revenue_product_ipad",
    ]  # the Products subtotal and the geographic segments left out: one breakdown, counted once
    run = deck_run("quick", user=analyst())
    with fake_deck_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    deck = DeckOutput.model_validate(ArtefactVersion.objects.get(run=run).content).deck
    # As the slide's chart, or as its table where the drafter drew a chart of its own.
    [mix] = [
        part
        for slide in deck.slides
        for part in (slide.chart, slide.table)
        if part is not None and part.title == "Revenue by line, FY2025Q3"
    ]
    points = mix.points if isinstance(mix, Chart) else mix.rows
    assert [p.label for p in points][:2] == ["Revenue: iPhone", "Revenue: Service"]
    if isinstance(mix, Chart):
        assert mix.category(0) == "iPhone" and mix.parts


def test_an_escalated_deck_says_which_gates_it_missed_and_what_the_analyst_can_do(client: Client) -> None:
    failing = {
        "scores": [
            {"dimension": d, "score": 1, "evidence": "supports holding the position"}
            for d in (
                "thesis_clarity",
                "coverage_depth",
                "narrative_flow",
                "visual_baseline",
                "actionability",
            )
        ],
        "weakest": [{"slide": 3, "dimension": "thesis_clarity", "problem": "No thesis."}],
    }
    run = deck_run("quick")
    client.force_login(run.brief.owner)
    # A person watching the run sees the panel without reloading: the page reloads itself when it ends.
    waiting = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="deck-escalation-pending" data-reload-when-done' in waiting
    with fake_deck_llm({"deck_gate": [failing, failing]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
    page = client.get(f"/runs/{run.pk}/").content.decode()
    panel = page[
        page.index('id="deck-escalation"') : page.index("</section>", page.index('id="deck-escalation"'))
    ]
    assert "Its closest draft scored R1 1.00; the entry bar is 3.20" in panel
    assert "thesis clarity 1" in panel
    assert "The judge already has a model of its own" in panel  # the tests' judge is "fake-judge"
    assert "Start the full profile: up to 4 rebuilds" in panel and "(this quick run had 1)" in panel

    done = deck_run("quick", user=run.brief.owner, question="Keep it, with a judge that passes it?")
    with fake_deck_llm():
        driver.run_inline(str(done.pk))
    assert 'id="deck-escalation"' not in client.get(f"/runs/{done.pk}/").content.decode()


def test_the_reviser_adds_a_slide_the_planner_asked_for_and_the_changelog_says_why(client: Client) -> None:
    def judged(composite_boost: int) -> dict[str, Any]:
        dims = (
            "actionability",
            "executive_altitude",
            "visual_digestibility",
            "clean_concise_story",
            "metric_traceability",
            "scope_adherence",
            "story_integrity",
            "visual_integrity",
        )
        return {
            "scores": [
                {
                    "dimension": d,
                    "score": 3 + (composite_boost if i < 5 else 1),
                    "evidence": "supports holding the position",
                }
                for i, d in enumerate(dims)
            ],
            "weakest": [{"slide": 3, "dimension": "actionability", "problem": "The quarter is missing."}],
        }

    order = {
        "target": "actionability",
        "action": "add_slide",
        "slides": [3],
        "instruction": "Add the quarter.",
    }
    added = {
        "slides": [],
        "remove": [],
        "add": [
            {
                "section": "Thesis",
                "title": "The latest quarter kept the pace of the year",
                "takeaway": "Momentum held into the new fiscal year.",
                "bullets": [],
                "table": None,
                "chart": None,
            }
        ],
        "reason": "The board will ask what the latest quarter says.",
    }
    run = deck_run("quick")
    with fake_deck_llm(
        {"deck_planner": [order], "deck_reviser": [added], "deck_scorer": [judged(0), judged(1)]}
    ):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    version = ArtefactVersion.objects.get(run=run)
    output = DeckOutput.model_validate(version.content)
    first = output.changelog[0]
    assert first.action == "add_slide" and first.accepted, first.reasons
    assert first.note == "added slide 4: The board will ask what the latest quarter says."
    assert output.deck.slides[3].title == "The latest quarter kept the pace of the year"
    assert [s.kind for s in output.deck.slides].count("section") == 5
    client.force_login(run.brief.owner)
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert "added slide 4: The board will ask what the latest quarter says." in page


def test_competitors_the_fact_store_holds_are_offered_to_the_section_on_competition() -> None:
    load_desk_data("AAPL")
    hp = Company.objects.create(ticker="HPQ", name="HP Inc.")
    for metric, value in (("revenue_growth_yoy", "-0.0061"), ("operating_margin", "0.0742")):
        FactRecord.objects.create(
            fact_id=f"HPQ:{metric}:FY2025",
            company=hp,
            metric=metric,
            value=Decimal(value),
            unit="pure",
            period_end=date(2025, 10, 31),
            fiscal_year=2025,
            fiscal_period="FY",
            source=FactRecord.Source.DERIVED,
            url="https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000047217",
            derivation="HPQ:operating_income:FY2025 / HPQ:revenue:FY2025",
        )
    apple = Company.objects.get(ticker="AAPL")
    figures = [figure_of(fact, own="AAPL") for fact in deck_facts(apple)]
    peer = {f.fact_id: f for f in figures}["HPQ:operating_margin:FY2025"]
    assert peer.label == "HPQ operating margin" and peer.display == "7.4%"
    plan = assign(
        [
            ("Growth", "Whether revenue grows."),
            ("Competitive position", "How Apple compares with its rivals."),
        ],
        figures,
        own="AAPL",
    )
    assert "peers" in plan.sections["Competitive position"].topics
    assert {"HPQ:operating_margin:FY2025", "HPQ:revenue_growth_yoy:FY2025"} <= set(
        plan.sections["Competitive position"].figures
    )
    assert not any(i.startswith("HPQ:") for i in plan.sections["Growth"].figures)
    assert all(i.startswith("AAPL:") for i in bridge_ids(figures))


def test_a_reviser_asked_about_the_summary_is_offered_what_its_framing_was() -> None:
    # Offered every figure of the run, the embedded reviser's prompt outgrew its 8,192-token slot.
    order = {
        "target": "executive_altitude",
        "action": "rewrite_section",
        "slides": [2],
        "instruction": "Lead.",
    }
    run = deck_run("quick")
    with fake_deck_llm({"deck_planner": [order]}) as server:
        driver.run_inline(str(run.pk))
        [framing] = [r for r in server.requests if r["prompt_name"] == "deck_framing"]
        [reviser] = [r for r in server.requests if r["prompt_name"] == "deck_reviser"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    user = next(m["content"] for m in reviser["body"]["messages"] if m["role"] == "user")
    to_reviser = set(FIGURE_ID.findall(user.split("Figures you may place")[1].split("Required sections")[0]))
    framed = next(m["content"] for m in framing["body"]["messages"] if m["role"] == "user")
    to_framing = set(FIGURE_ID.findall(framed.split("Figures you may cite")[1].split("The desk's memo")[0]))
    assert to_framing and to_reviser == to_framing
    everything = {fact.fact_id for fact in deck_facts(run.brief.company)} if run.brief.company else set()
    assert len(to_reviser) < len(everything) / 2
