"""A deck shaped for a board, by code: each section its own figures, a title slide, the risks and the sources
written from the figures, a bridge drawn in both renderers, action titles asked for and topic titles found,
T12's tells ordered fixed, and the firm's theme on every file."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from pptx import Presentation

from agents.data.edgar.companyfacts import facts_from_companyfacts, read_companyfacts_file
from agents.deck.assign import BRIDGE_METRICS, assign, body_sections, bridge_ids, latest_figures
from agents.deck.candidate import lookup_for
from agents.deck.code_slides import MemoLines, code_kind, market_move, risks_slide, sources_slide
from agents.deck.factcheck.check import check
from agents.deck.humanizer import humanize_findings
from agents.deck.lint.checks import lint_pptx
from agents.deck.narrowing import judgement_schema, quotable_lines
from agents.deck.outline import deck_lines, draft_of, quote_found
from agents.deck.outputs import ChangelogEntry, Finding
from agents.deck.resolve import SUMMARY_SECTION, DeckFrame, Resolution, resolve
from agents.deck.revise import apply_to_deck
from agents.deck.schemas import (
    BulletDraft,
    ChartDraft,
    DeckDraft,
    RevisedSlide,
    Revision,
    SlideDraft,
    TableDraft,
    WorkOrder,
)
from agents.deck.slips import tell_order
from agents.deck.spec import Bullet, Chart, Deck, Figure, Slide, Table, Theme, deck_theme, display
from agents.env import ConfigError
from agents.render.charts import bridge_spans, takes_away
from tests.agents.deck.rendering import render
from tests.agents.deck.samples import figure, titled_deck

EDGAR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "edgar" / "companyfacts"


def fig(
    metric: str, period: str, value: str, unit: str = "USD", source: str = "10-K filed 2025-10-31"
) -> Figure:
    fact_id = f"AAPL:{metric}:{period}"
    return Figure(
        fact_id=fact_id,
        label={"fcf": "Free cash flow"}.get(metric, metric.replace("_", " ").capitalize()),
        period=period,
        value=value,
        unit=unit,
        display=display(Decimal(value), unit, fact_id=fact_id),
        source=source,
    )


POOL = [
    *(
        fig("revenue", f"FY{y}", v)
        for y, v in ((2023, "383285000000"), (2024, "391035000000"), (2025, "416161000000"))
    ),
    *(fig("revenue_growth_yoy", f"FY{y}", v, "pure") for y, v in ((2024, "0.0202"), (2025, "0.0643"))),
    *(fig("operating_margin", f"FY{y}", v, "pure") for y, v in ((2024, "0.3151"), (2025, "0.3197"))),
    *(fig("net_margin", f"FY{y}", v, "pure") for y, v in ((2024, "0.2397"), (2025, "0.2692"))),
    *(fig("fcf", f"FY{y}", v) for y, v in ((2024, "108807000000"), (2025, "98767000000"))),
    fig("capex", "FY2025", "12715000000"),
    fig("rnd_expense", "FY2025", "34550000000"),
    fig("revenue", "FY2026Q1", "143756000000", source="10-Q filed 2026-01-30"),
    fig("revenue", "FY2025Q4", "102466000000", source="10-K filed 2025-10-31"),
    fig("revenue_ttm", "FY2026Q1", "435617000000", source="derived by code from filed figures"),
    fig("cost_of_revenue", "FY2025", "220960000000", source="derived by code from filed figures"),
    fig("gross_profit", "FY2025", "195201000000"),
    fig("operating_expenses", "FY2025", "62151000000", source="derived by code from filed figures"),
    fig("operating_income", "FY2025", "133050000000"),
    fig("below_operating", "FY2025", "21040000000", source="derived by code from filed figures"),
    fig("net_income", "FY2025", "112010000000"),
    fig("beta", "as of 2026-10-30", "1.21", "pure", source="computed by code from daily prices"),
    fig(
        "volatility_annualised",
        "as of 2026-10-30",
        "0.281",
        "pure",
        source="computed by code from daily prices",
    ),
]
SECTIONS = [
    ("Growth engine", "Whether revenue growth holds as the mix moves to services."),
    ("Margin durability", "Whether the operating margin and pricing survive the cycle."),
    ("Capital returns", "How free cash flow and capital expenditure fund buybacks."),
    ("Recent quarters", "What the latest quarter says about momentum."),
]


def test_each_section_gets_the_figures_its_purpose_names_and_no_figure_is_offered_twice() -> None:
    plan = assign(SECTIONS, POOL)
    topics = {name: planned.topics for name, planned in plan.sections.items()}
    assert "growth" in topics["Growth engine"] and "profitability" in topics["Margin durability"]
    assert "cash" in topics["Capital returns"] and "recent" in topics["Recent quarters"]
    offered = [fact_id for planned in plan.sections.values() for fact_id in planned.figures]
    assert len(offered) == len(set(offered))  # no table or chart can show a figure another slide shows
    assert all(planned.figures for planned in plan.sections.values())
    # The price risk is kept for code's risks slide; the bridge goes where profitability is.
    assert set(plan.risks) == {"AAPL:beta:as of 2026-10-30", "AAPL:volatility_annualised:as of 2026-10-30"}
    assert not set(plan.risks) & set(offered)
    assert plan.sections["Margin durability"].bridge == bridge_ids(POOL)
    assert tuple(i.split(":")[1] for i in bridge_ids(POOL)) == BRIDGE_METRICS  # revenue ... net income


FIGURES_BY_ID = {f.fact_id: f for f in POOL}


def test_the_summary_s_reasons_are_offered_each_metric_s_latest_year_and_quarter_only() -> None:
    offered = latest_figures(FIGURES_BY_ID)
    assert "AAPL:revenue:FY2025" in offered and "AAPL:revenue:FY2026Q1" in offered
    assert "AAPL:revenue:FY2024" not in offered and "AAPL:revenue:FY2025Q4" not in offered
    assert "AAPL:revenue_growth_yoy:FY2025" in offered and "AAPL:revenue_growth_yoy:FY2024" not in offered
    assert "AAPL:beta:as of 2026-10-30" in offered  # a price record is as of a day: kept
    assert list(offered) == [i for i in FIGURES_BY_ID if i in offered]  # in the data stage's order


LINES = [
    fig(f"revenue_product_{slug}", "FY2025", value, source="10-K filed 2025-10-31").model_copy(
        update={"label": f"Revenue: {name}"}
    )
    for slug, name, value in (
        ("iphone", "iPhone", "209586000000"),
        ("service", "Service", "109158000000"),
        ("wearables_home_and_accessories", "Wearables, Home and Accessories", "35686000000"),
    )
]


def test_revenue_by_line_is_code_s_chart_on_the_growth_slide_labelled_by_line_and_fact_checked() -> None:
    pool = [*POOL, *LINES]
    plan = assign([("Growth", "Where revenue comes from."), ("Margins", "Profit.")], pool, own="AAPL")
    assert plan.sections["Growth"].mix == tuple(f.fact_id for f in LINES)
    assert not plan.sections["Margins"].mix
    slide = SlideDraft(
        section="Growth", title="Phones still carry revenue", takeaway="Services grow.", bullets=[]
    )
    draft = DeckDraft(title="Hold", thesis="Growth holds.", slides=[slide])
    frame = DeckFrame("Apple Inc.", "AAPL", "For the committee", plan=plan)
    deck, _ = resolve(draft, {f.fact_id: f for f in pool}, frame)
    chart = deck.slides[1].chart
    assert chart is not None and chart.parts and chart.title == "Revenue by line, FY2025"
    assert [chart.category(i) for i in range(3)] == ["iPhone", "Service", "Wearables, Home and Accessories"]
    rendered = render(deck)
    for data in (rendered.pptx, rendered.pdf):
        assert [
            f
            for f in check(data, lookup_for(FIGURES_BY_ID | {f.fact_id: f for f in LINES})).figures
            if f.status != "ok"
        ] == []
    assert not [f for f in lint_pptx(rendered.pptx, deck) if f.slide == 2 and f.rule != "wall_of_text"]
    assert ">Wearables, Home</text>" in rendered.html  # a long line's name on two lines under its bar
    # Beside a drafted chart it is the slide's table, which a reviser's draft never carries (it may hold
    # more lines than a drafted table may): code draws it again.
    six = [*LINES, *(line.model_copy(update={"fact_id": f"{line.fact_id}x"}) for line in LINES)]
    table_slide = deck.slides[1].model_copy(update={"table": Table(title="Revenue by line", rows=tuple(six))})
    assert draft_of(deck.model_copy(update={"slides": (deck.slides[0], table_slide)})).slides[0].table is None


def test_a_resolved_bullet_longer_than_a_draft_may_hold_goes_to_the_reviser_cut_to_whole_sentences() -> None:
    # A re-asked sentence ran past the drafted bullet's bound (the fresh desk's lap failed on it three times).
    long = (
        "Free cash flow is the cash generated after paying operating expenses and capital expenditures. "
        "It funds the buyback and the dividend, and it fell in the latest fiscal year on higher spending."
    )
    deck = titled_deck(4)
    slide = deck.slides[1].model_copy(update={"bullets": (Bullet(text=long, figures=(POOL[0],)),)})
    draft = draft_of(deck.model_copy(update={"slides": (deck.slides[0], slide, *deck.slides[2:])}))
    bullet = draft.slides[0].bullets[0]
    assert bullet.text == long.split(". ", maxsplit=1)[0] + "." and bullet.figures == [POOL[0].fact_id]


# Apple FY2024 to FY2025, in millions: net income 93,736 -> 112,010; each step is a line's effect on it.
EARNINGS = [
    fig("net_income", "FY2024", "93736000000"),
    *(
        fig(f"ni_step_{name}", "FY2025", value, source="derived by code from filed figures").model_copy(
            update={"label": label}
        )
        for name, label, value in (
            ("revenue", "Revenue", "25126000000"),
            ("cost_of_revenue", "Cost of revenue", "-10000000000"),
            ("operating_expenses", "Operating expenses", "-4000000000"),
            ("below_operating", "Tax, interest and other", "7148000000"),
        )
    ),
]


def test_what_moved_net_income_on_the_year_is_code_s_bridge_on_the_earnings_slide() -> None:
    pool = [*POOL, *EARNINGS]
    sections = [("Growth", "Revenue."), ("Margins", "Profit margins."), ("Earnings", "Net income and EPS.")]
    plan = assign(sections, pool, own="AAPL")
    ids = plan.sections["Earnings"].earnings
    assert ids[0] == "AAPL:net_income:FY2024" and ids[-1] == "AAPL:net_income:FY2025" and len(ids) == 6
    assert not plan.sections["Margins"].earnings  # that slide has the bridge from revenue to net income
    slides = [
        SlideDraft(section=name, title=f"{name} moved", takeaway="It moved.", bullets=[])
        for name, _ in sections
    ]
    deck, _ = resolve(
        DeckDraft(title="Hold", thesis="Holds.", slides=slides),
        {f.fact_id: f for f in pool},
        DeckFrame("Apple Inc.", "AAPL", "For the committee", plan=plan),
    )
    chart = deck.slides[3].chart
    assert chart is not None and chart.adds and chart.title == "What moved net income from FY2024 to FY2025"
    spans = bridge_spans(chart)
    assert spans[-2][1] == spans[-1][1] == Decimal("112010000000")  # the steps land on this year's total
    assert [takes_away(chart, i) for i in range(6)] == [False, False, True, True, False, False]
    assert chart.category(0) == "Net income FY2024" and chart.category(2) == "Cost of revenue"
    rendered = render(deck)
    lookup = lookup_for({f.fact_id: f for f in pool})
    for data in (rendered.pptx, rendered.pdf):
        assert [f for f in check(data, lookup).figures if f.status != "ok"] == []
    assert not [f for f in lint_pptx(rendered.pptx, deck) if f.slide == 4 and f.rule != "wall_of_text"]


def test_sections_nothing_speaks_to_still_each_get_a_topic_of_their_own() -> None:
    plan = assign([("Thesis", "Why."), ("Context", "Why."), ("Outlook", "Why.")], POOL)
    assert all(planned.topics for planned in plan.sections.values())
    every = [t for planned in plan.sections.values() for t in planned.topics]
    assert len(every) == len(set(every))


def test_trailing_twelve_months_are_the_last_year_plus_the_quarters_since_less_the_same_quarters_before() -> (
    None
):
    facts = facts_from_companyfacts(
        read_companyfacts_file(EDGAR / "CIK0000320193_AAPL.json.gz"), ticker="AAPL"
    ).facts_by_id()
    ttm = facts["AAPL:revenue_ttm:FY2026Q1"]
    expected = (
        facts["AAPL:revenue:FY2025"].value
        + facts["AAPL:revenue:FY2026Q1"].value
        - facts["AAPL:revenue:FY2025Q1"].value
    )
    assert ttm.value == expected == Decimal("435617000000")
    assert ttm.derivation == "AAPL:revenue:FY2025 + AAPL:revenue:FY2026Q1 - AAPL:revenue:FY2025Q1"
    steps = facts["AAPL:cost_of_revenue:FY2025"].value + facts["AAPL:operating_expenses:FY2025"].value
    steps += facts["AAPL:below_operating:FY2025"].value
    assert facts["AAPL:revenue:FY2025"].value - steps == facts["AAPL:net_income:FY2025"].value
    margin = facts["AAPL:gross_margin:FY2026Q1"]  # a quarter's own margin
    assert margin.inputs == ("AAPL:gross_profit:FY2026Q1", "AAPL:revenue:FY2026Q1")


def bridge_deck() -> tuple[Chart, object]:
    by_id = {f.fact_id: f for f in POOL}
    points = tuple(by_id[i] for i in bridge_ids(POOL))
    chart = Chart(
        title="From revenue to net income, FY2025",
        kind="bridge",
        unit="USD",
        points=points,
        steps=tuple(index % 2 == 1 for index in range(len(points))),
    )
    deck = titled_deck(2)
    body = deck.slides[1].model_copy(update={"chart": chart, "bullets": (), "table": None})
    return chart, deck.model_copy(update={"slides": (deck.slides[0], body, *deck.slides[2:])})


def test_a_bridge_is_drawn_in_both_files_labelled_by_step_and_passes_the_fact_check() -> None:
    chart, deck = bridge_deck()
    rendered = render(deck)  # type: ignore[arg-type]
    figures = {f.fact_id: f for f in (*POOL, *deck.figures().values())}  # type: ignore[attr-defined]
    for data in (rendered.pptx, rendered.pdf):
        report = check(data, lookup_for(figures))
        assert report.ok, report.problems()
    slide = Presentation(io.BytesIO(rendered.pptx)).slides[1]
    [native] = [shape for shape in slide.shapes if getattr(shape, "has_chart", False)]
    root = etree.fromstring(native.chart_part.blob)
    c = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
    assert root.find(f".//{c}grouping").get("val") == "stacked"
    categories = [v.text for v in root.find(f".//{c}cat").iter(f"{c}v")]
    assert categories == [chart.category(i) for i in range(len(chart.points))]
    assert categories[:3] == ["Revenue", "Less cost of revenue", "Gross profit"]
    labels = [
        "".join(t.text or "" for t in label.iter("{http://schemas.openxmlformats.org/drawingml/2006/main}t"))
        for label in root.iter(f"{c}dLbl")
    ]
    assert sorted(filter(None, labels)) == sorted(point.display for point in chart.points)
    offset = root.findall(f".//{c}ser")[0]
    drawing = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    assert offset.find(f".//{drawing}noFill") is not None  # the offset series is not drawn
    assert "Less operating" in rendered.html and "expenses" in rendered.html


def test_the_risks_slide_says_what_fell_how_the_shares_move_and_what_would_prove_the_memo_wrong() -> None:
    by_id = {f.fact_id: f for f in POOL}
    memo = MemoLines(
        version="memo v2",
        falsifiers=("Services growth stalls for two quarters.", "Margins fall below 30% next year."),
    )
    risk_ids = ("AAPL:beta:as of 2026-10-30", "AAPL:volatility_annualised:as of 2026-10-30")

    def words(text: str) -> str:  # the resolver withholds a sentence with a typed figure
        return "" if "%" in text else text

    slide = risks_slide(7, by_id, risk_ids, memo, words)
    texts = [b.text for b in slide.bullets]
    assert texts[0] == "Free cash flow fell on the year before"
    assert slide.bullets[0].figures == (by_id["AAPL:fcf:FY2024"], by_id["AAPL:fcf:FY2025"])
    assert "The shares move more than the market" in texts  # beta 1.21
    [swing] = [b for b in slide.bullets if b.text.startswith("The shares")]
    assert {f.fact_id for f in swing.figures} == set(risk_ids)
    assert "The memo v2 would be wrong if: Services growth stalls for two quarters." in texts
    assert not any("30%" in text for text in texts)
    assert slide.title == "Free cash flow fell in FY2025; the shares move more than the market"


@pytest.mark.parametrize(
    ("beta", "said"),
    [
        ("1.21", "move more than the market"),
        ("1.02", "move with the market"),
        ("0.72", "move less than the market"),
    ],
)
def test_a_beta_near_one_says_the_shares_move_with_the_market(beta: str, said: str) -> None:
    assert market_move(fig("beta", "as of 2017-09-01", beta, "pure")) == said


def test_the_sources_slide_lists_filings_first_and_is_not_counted_as_a_wall_of_text() -> None:
    slide = sources_slide(9, POOL)
    lines = [b.text for b in slide.bullets]
    assert lines[0].startswith("SEC EDGAR, 10-K filed 2025-10-31: Revenue")
    assert lines[1].startswith("SEC EDGAR, 10-Q filed 2026-01-30")
    assert any(line.startswith("Computed by code from daily prices: Beta") for line in lines)
    deck = titled_deck(3)
    assert deck.slides[-1].kind == "sources"
    findings = lint_pptx(render(deck).pptx, deck)
    assert not [f for f in findings if f.slide == len(deck.slides) and f.rule == "wall_of_text"]


@pytest.mark.parametrize(
    ("title", "topic"),
    [
        ("Risks: what the filed figures say", True),
        ("Profitability", True),
        ("Margin durability: an overview", True),
        ("Services now carry the margin", False),
        ("Growth returned after a flat year", False),
    ],
)
def test_a_topic_title_is_a_tell_and_an_action_title_is_not(title: str, topic: bool) -> None:
    deck = titled_deck(2)
    section = "Profitability" if title == "Profitability" else deck.slides[1].section
    slide = deck.slides[1].model_copy(update={"title": title, "section": section})
    deck = deck.model_copy(update={"slides": (deck.slides[0], slide, *deck.slides[2:])})
    found = [f for f in humanize_findings(deck) if f.rule == "topic_title"]
    assert bool(found) is topic


def test_tells_get_code_s_work_order_unless_the_last_one_was_rejected() -> None:
    findings = [
        Finding(rule="em_dash", slide=3, shape="title", message="a dash"),
        Finding(rule="topic_title", slide=4, shape="title", message="a topic"),
        Finding(rule="ai_design", slide=5, shape="pptx", message="a gradient"),  # the renderer's, not words
    ]
    order = tell_order(findings, None)
    assert order is not None and order.action == "humanize_text" and order.slides == [3, 4]
    rejected = ChangelogEntry(lap=1, action="humanize_text", target="", accepted=False, margin=0, reasons=[])
    assert tell_order(findings, rejected) is None
    assert tell_order(findings[2:], None) is None


def test_a_revision_changes_drafted_slides_by_their_deck_number_and_never_code_s_slides() -> None:
    deck = titled_deck(3)  # 1 title, 2-4 drafted, 5 risks, 6 sources
    draft = draft_of(deck)
    assert len(draft.slides) == 3
    new = SlideDraft(section=deck.slides[2].section, title="A new point", takeaway="So what.", bullets=[])
    order = WorkOrder(target="actionability", action="rewrite_section", slides=[1, 3], instruction="Sharper.")
    revision = Revision(
        slides=[RevisedSlide(number=3, slide=new), RevisedSlide(number=1, slide=new)], remove=[]
    )
    applied = apply_to_deck(deck, draft, order, revision)
    assert applied.changed == [3] and applied.ignored == [1]
    assert applied.draft.slides[1].title == "A new point" and applied.draft.slides[0] == draft.slides[0]


def test_the_theme_is_checked_and_drawn_in_both_files() -> None:
    with pytest.raises(ConfigError, match="DECK_ACCENT_COLOUR"):
        deck_theme(firm="Northwind", accent="blue", ink="#000000", negative="#AA0000")
    theme = deck_theme(firm="Northwind", accent="#0a6e4f", ink="#111111", negative="#aa0000")
    assert theme == Theme(
        firm="Northwind", accent="#0A6E4F", ink="#111111", muted="#6B7280", negative="#AA0000"
    )
    deck = titled_deck(2, theme=theme)
    rendered = render(deck)
    with io.BytesIO(rendered.pptx) as handle:
        xml = b"".join(
            part.blob
            for part in Presentation(handle).part.package.iter_parts()
            if part.partname.endswith(".xml")
        )
    assert b"0A6E4F" in xml and b"1F4E79" not in xml
    assert "#0A6E4F" in rendered.html and "#1F4E79" not in rendered.html


def test_code_s_slides_are_marked_for_the_judge_and_slide_for_the_reviser() -> None:
    deck = titled_deck(2)
    assert [s.kind for s in deck.slides] == ["title", "section", "section", "risks", "sources"]
    assert [s.number for s in deck.drafted()] == [2, 3]
    assert isinstance(deck.slides[0], Slide) and deck.slides[0].title == deck.title
    assert figure("revenue", 2024).fact_id in deck.figures()


def test_a_reviser_may_add_a_slide_within_the_profile_s_bound_and_remove_one_above_the_minimum() -> None:
    deck = titled_deck(3)  # drafted slides 2-4
    draft = draft_of(deck)
    new = SlideDraft(
        section=deck.slides[1].section, title="What the quarter says", takeaway="Momentum held.", bullets=[]
    )
    add = WorkOrder(
        target="actionability", action="add_slide", slides=[3], instruction="The quarter is missing."
    )
    revision = Revision(slides=[], remove=[], add=[new], reason="The board asks about the latest quarter.")

    applied = apply_to_deck(deck, draft, add, revision, max_slides=4)
    # After deck slide 3 (the draft's second): the deck's new slide 4, the draft's third.
    assert applied.added == 4 and len(applied.draft.slides) == 4
    assert applied.draft.slides[2].title == "What the quarter says"
    assert applied.note(revision.reason) == "added slide 4: The board asks about the latest quarter."
    refused = apply_to_deck(deck, draft, add, revision, max_slides=3)
    assert refused.added is None and len(refused.draft.slides) == 3
    assert refused.note("") == "no slide added: the profile allows 3 drafted slides"
    # An addition the order's action does not allow is not made.
    rewrite = add.model_copy(update={"action": "rewrite_section"})
    assert apply_to_deck(deck, draft, rewrite, revision).added is None

    grown = apply_to_deck(deck, draft, add, revision, max_slides=8).draft
    bigger = deck.model_copy(
        update={
            "slides": (deck.slides[0], *deck.slides[1:4], deck.slides[3].model_copy(update={"number": 5}))
        }
    )
    remove = WorkOrder(
        target="clean_concise_story", action="remove_slide", slides=[4], instruction="Redundant."
    )
    cut = apply_to_deck(
        bigger, grown, remove, Revision(slides=[], remove=[4], reason="It repeats slide three.")
    )
    assert cut.removed == (4,) and len(cut.draft.slides) == 3
    assert cut.note("It repeats slide three.") == "removed slide 4: It repeats slide three."
    at_minimum = apply_to_deck(deck, draft, remove, Revision(slides=[], remove=[4]))
    assert at_minimum.removed == () and len(at_minimum.draft.slides) == 3 and at_minimum.ignored == [4]


def test_every_slide_s_speaker_notes_carry_its_takeaway_and_each_figure_s_fact_id_and_source() -> None:
    deck = titled_deck(3)
    presentation = Presentation(io.BytesIO(render(deck).pptx))
    for slide, page in zip(deck.slides, presentation.slides, strict=True):
        notes = page.notes_slide.notes_text_frame.text
        assert notes.startswith(slide.takeaway)
        for shown in slide.figures():
            assert f"{shown.display} ({shown.fact_id}; {shown.source})" in notes


@pytest.mark.parametrize(
    ("section", "kind"),
    [
        ("Executive Summary", "summary"),
        ("Risks and mitigants", "risks"),
        ("Key risk factors", "risks"),
        ("Sources & references", "sources"),
        ("Growth drivers", None),
        ("Risk-adjusted returns? No: capital allocation", "risks"),
    ],
)
def test_a_scope_section_code_s_own_slides_answer_is_known_by_its_name(
    section: str, kind: str | None
) -> None:
    assert code_kind(section) == kind


def test_the_judge_may_only_quote_the_deck_s_own_lines_verbatim() -> None:
    deck = titled_deck(2)
    lines = quotable_lines(deck_lines(deck))
    assert deck.slides[1].title in lines and all(len(line) <= 160 for line in lines)
    schema = judgement_schema(False, lines).model_json_schema()
    [score] = [node for node in schema["$defs"].values() if "evidence" in node["properties"]]
    assert score["properties"]["evidence"]["enum"] == list(lines)
    assert all(quote_found(line, deck) for line in lines)


def test_a_quote_is_checked_as_every_workflow_checks_one() -> None:
    """The deck folded only blanks and case; the memo and the agency also fold what a copy may change without
    changing the words (agents.text.quotes). One fold now: curly quotes, another case and an ellipsis where
    the quote stops still quote the deck; other words do not."""
    deck = titled_deck(2)
    title = deck.slides[1].title
    assert quote_found(f"“{title.upper()}…”", deck)
    assert not quote_found(f"{title} and more", deck)


def test_a_scope_left_without_a_body_gets_code_s_sections_for_the_topics_the_figures_hold() -> None:
    # The embedded 1.5B's scope: "Executive Summary, Risks, Sources", all answered by code's own slides.
    asked = [
        (n, p)
        for n, p in (("Executive Summary", "Sum up."), ("Risks", "Risks."), ("Sources", "List them."))
        if code_kind(n) is None
    ]
    assert asked == []
    body = body_sections(asked, POOL, own="AAPL")
    assert [name for name, _ in body] == ["Growth", "Profitability", "Cash and capital"]
    # A scope that already speaks of growth keeps its own section and gets the next topics.
    body = body_sections([("Where growth comes from", "Revenue by year.")], POOL, own="AAPL")
    assert [name for name, _ in body] == ["Where growth comes from", "Profitability", "Cash and capital"]
    plan = assign(body, POOL, own="AAPL")
    assert plan.sections["Profitability"].bridge


def one_slide(typed: str, **parts: Any) -> tuple[Deck, Resolution]:
    """A draft of one Growth slide whose bullet says ``typed``, resolved against the pool."""
    bullets = [BulletDraft(text=typed, figures=["AAPL:revenue:FY2025"])] if typed else []
    words = {"title": "Revenue grew", "takeaway": "Demand held.", **parts}
    slide = SlideDraft(section="Growth", bullets=bullets, **words)
    draft = DeckDraft(title="Hold the position", thesis="Growth holds.", slides=[slide])
    return resolve(draft, {f.fact_id: f for f in POOL}, DeckFrame("Apple Inc.", "AAPL", "For the committee"))


@pytest.mark.parametrize(
    "typed",
    [
        "Revenue growth is positive (revenue_growth_yoy: )",  # a figure's place left empty
        "AAPL:capex:FY: Capital expenditure FY = USD ial USD ial.",  # the figure list copied
        "Revenue growth from FY FY :",  # a fiscal label without its year
        "Cash rose = USD ial.",
        "Revenue rose to ¥ ¥ in FY2025.",  # a currency sign where a figure was barred
    ],
)
def test_a_hole_or_the_figure_list_copied_into_a_bullet_is_withheld(typed: str) -> None:
    deck, notes = one_slide(typed)
    bullet = deck.slides[1].bullets[0]
    assert bullet.text == "" and bullet.figures and notes.withheld == ["slide 2: bullet 1"]


def test_a_title_and_takeaway_withheld_whole_give_way_to_code_words_true_of_the_slide() -> None:
    """A slide whose whole takeaway typed a figure no fact backs is not left with an empty box (a broken
    slide, rejected with every good word on it): code says which way the slide's figures moved."""
    growth = ["AAPL:revenue:FY2024", "AAPL:revenue:FY2025", "AAPL:fcf:FY2024", "AAPL:fcf:FY2025"]
    deck, notes = one_slide(
        "Sales held up.",
        title="Revenue hit $999 billion",
        takeaway="Revenue grew 12% while cash fell ¥ ¥.",
        table=TableDraft(title="Growth by year", rows=growth),
    )
    slide = deck.slides[1]
    assert slide.title == "Revenue rose in FY2025"
    assert slide.takeaway == "Revenue rose in FY2025 and free cash flow fell in FY2025."
    assert notes.withheld == ["slide 2: title", "slide 2: takeaway"]
    assert notes.stood_in == ["slide 2: title", "slide 2: takeaway"]
    # Nothing to compare: the slide's figures by name, never a blank.
    deck, _ = one_slide("Sales held up.", takeaway="It rose 7%.")
    assert deck.slides[1].takeaway == "Growth: revenue, from the filings."


def test_a_summary_whose_recommendation_was_withheld_states_the_memo_s_instead() -> None:
    summary = SlideDraft(
        section=SUMMARY_SECTION, title="Buy below $150", takeaway="Hold.", bullets=[], table=None, chart=None
    )
    draft = DeckDraft(title="Hold the position", thesis="Growth holds.", slides=[summary])
    memo = MemoLines(version="memo v3", recommendation="HOLD, half position")
    frame = DeckFrame("Apple Inc.", "AAPL", "For the committee", memo=memo)
    deck, notes = resolve(draft, {f.fact_id: f for f in POOL}, frame)
    assert deck.slides[1].title == "The memo v3 recommends HOLD, half position"
    assert notes.stood_in == ["slide 2: title"]


def test_a_table_repeating_the_chart_beside_it_is_dropped() -> None:
    growth = ["AAPL:revenue_growth_yoy:FY2024", "AAPL:revenue_growth_yoy:FY2025"]
    deck, notes = one_slide(
        "",
        table=TableDraft(title="Growth by year", rows=growth),
        chart=ChartDraft(title="Growth over the years", kind="line", points=growth),
    )
    assert deck.slides[1].table is None and deck.slides[1].chart is not None
    assert notes.dropped == ["slide 2: table (the chart beside it shows its figures)"]
