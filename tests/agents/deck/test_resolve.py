"""A number the drafter typed in a bullet, backed by one of the run's figures, is printed as code displays
that figure and cited with the slide's figures: the rendered deck passes T5 with it. A number no figure
backs still takes its sentence with it."""

from __future__ import annotations

from agents.deck.candidate import build
from agents.deck.resolve import SUMMARY_SECTION, DeckFrame, resolve
from agents.deck.schemas import BulletDraft, DeckDraft, Scope, SectionPlan, SlideDraft
from tests.agents.deck.samples import figure

REVENUE = figure("revenue", 2024)
MARGIN = figure("gross_margin", 2024)
FIGURES = {f.fact_id: f for f in (REVENUE, MARGIN, figure("net_income", 2024))}
FRAME = DeckFrame(company="Apple Inc.", ticker="AAPL", subtitle="Board · data as of 2024-11-01")
SECTIONS = ("Performance", "Profitability", "Outlook")


def _draft(bullets: list[BulletDraft]) -> DeckDraft:
    slides = [
        SlideDraft(section=SECTIONS[0], title="Sales held up", takeaway="Revenue held.", bullets=bullets),
        *(
            SlideDraft(section=name, title=name, takeaway=f"{name} in words.", bullets=[])
            for name in SECTIONS[1:]
        ),
    ]
    return DeckDraft(title="Keep the position", thesis="Hold.", slides=slides)


def test_a_typed_number_a_figure_backs_is_printed_as_that_figure_and_cited_once() -> None:
    bullets = [
        BulletDraft(text="Revenue reached $391.0 billion in FY2024.", figures=[REVENUE.fact_id]),
        BulletDraft(text="The gross margin held near 46.2%. Services grew 14% a year.", figures=[]),
    ]
    deck, notes = resolve(_draft(bullets), FIGURES, FRAME)
    first, second = deck.slides[1].bullets  # slide 1 is code's title slide
    assert first.text == f"Revenue reached {REVENUE.display} in FY2024."
    assert first.inline == (REVENUE,) and first.figures == ()  # printed once, where it stands
    assert second.text == f"The gross margin held near {MARGIN.display}." and second.inline == (MARGIN,)
    assert notes.resolved == ["slide 2: bullet 1", "slide 2: bullet 2"]
    assert notes.withheld == ["slide 2: bullet 2"]  # "14% a year": no figure backs it
    assert deck.slides[1].figures() == [REVENUE, MARGIN]


def test_the_rendered_deck_with_code_written_figures_passes_the_fact_check() -> None:
    scope = Scope(
        decision="Keep the position?",
        audience="Board",
        required_sections=[SectionPlan(name=name, purpose=f"{name} of the year") for name in SECTIONS],
        key_questions=["Does revenue hold?", "Is the margin safe?"],
    )
    bullets = [BulletDraft(text="Revenue reached $391.0 billion in FY2024.", figures=[REVENUE.fact_id])]
    candidate = build(_draft(bullets), FIGURES, FRAME, scope)
    assert candidate.mismatches == [] and candidate.measured.mismatches == 0
    assert candidate.resolved == ["slide 2: bullet 1"] and candidate.withheld == []


def test_a_line_opens_with_a_capital_unless_its_first_word_is_a_name() -> None:
    bullets = [
        BulletDraft(text="the installed base keeps buying services.", figures=[]),
        BulletDraft(text="iPhone remains the largest line.", figures=[]),
    ]
    deck, _ = resolve(_draft(bullets), FIGURES, FRAME)
    opened, named = deck.slides[1].bullets
    assert opened.text == "The installed base keeps buying services."
    assert named.text == "iPhone remains the largest line."


def test_words_that_only_name_the_bullet_s_figure_are_left_to_the_figure() -> None:
    bullets = [
        BulletDraft(text="Revenue", figures=[REVENUE.fact_id]),
        BulletDraft(text="The margin held up through the year. Gross mar", figures=[MARGIN.fact_id]),
    ]
    deck, notes = resolve(_draft(bullets), FIGURES, FRAME)
    named, cut = deck.slides[1].bullets
    assert named.text == "" and named.figures == (REVENUE,)  # printed once, as "Revenue FY2024: ..."
    assert cut.text == "The margin held up through the year." and cut.figures == (MARGIN,)
    assert notes.dropped == [f"slide 2: bullet {n}: words that only name its figure" for n in (1, 2)]


def test_a_section_slide_that_repeats_the_deck_s_title_or_thesis_gets_code_s_words() -> None:
    draft = _draft([BulletDraft(text="Revenue rose.", figures=[REVENUE.fact_id])])
    copied = draft.slides[1].model_copy(update={"title": "Keep the position", "takeaway": "Hold"})
    draft = draft.model_copy(update={"slides": [draft.slides[0], copied, draft.slides[2]]})
    deck, notes = resolve(draft, FIGURES, FRAME)
    slide = deck.slides[2]
    assert slide.title == "Profitability" and slide.takeaway == "Profitability."  # nothing to compare: names
    assert "slide 3: title (the deck's title again)" in notes.dropped
    assert "slide 3: takeaway (the thesis again)" in notes.dropped
    assert notes.stood_in == ["slide 3: title", "slide 3: takeaway"]


def test_a_summary_reason_whose_words_were_withheld_gets_code_s_words_from_its_figure_s_year_before() -> None:
    before = figure("revenue", 2023)
    figures = {**FIGURES, before.fact_id: before}
    summary = SlideDraft(
        section=SUMMARY_SECTION,
        title="Keep the position",
        takeaway="Hold.",
        bullets=[
            BulletDraft(text="Sales reached 999 billion.", figures=[REVENUE.fact_id]),  # no figure backs it
            BulletDraft(text="The margin held up.", figures=[MARGIN.fact_id]),
        ],
    )
    draft = _draft([])
    draft = draft.model_copy(update={"slides": [summary, *draft.slides]})
    deck, notes = resolve(draft, figures, FRAME)
    stood, kept = deck.slides[1].bullets
    assert stood.text == "Revenue rose in FY2024" and stood.figures == (before, REVENUE)
    assert kept.text == "The margin held up." and kept.figures == (MARGIN,)
    assert "slide 2: bullet 1" in notes.stood_in and "slide 2: bullet 1" in notes.withheld
