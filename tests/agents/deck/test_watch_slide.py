"""The "what to watch" slide quotes the brief's latest memo: its thesis, its dated catalysts with the way it
expected them to move the shares, and the falsifiers the risks slide did not quote. A memo citation prints
as its figure and passes the fact-check; a line citing what the deck was not given, or typing a number of
its own, is withheld; memo lines at their longest still fit the slide."""

from __future__ import annotations

from agents.deck.candidate import lookup_for
from agents.deck.code_slides import MemoLines
from agents.deck.factcheck.check import check
from agents.deck.lint.checks import lint_pptx
from agents.deck.resolve import DeckFrame, Resolution, resolve
from agents.deck.schemas import BulletDraft, DeckDraft, SlideDraft
from agents.deck.spec import Deck
from agents.deck.watch_slide import MemoCatalyst
from tests.agents.deck.rendering import render
from tests.agents.deck.test_deck_shape import POOL

FIGURES = {f.fact_id: f for f in POOL}
REVENUE = FIGURES["AAPL:revenue:FY2025"]
MARGIN = FIGURES["AAPL:operating_margin:FY2025"]


def _deck(memo: MemoLines) -> tuple[Deck, Resolution]:
    slide = SlideDraft(
        section="Growth",
        title="Revenue grew on services",
        takeaway="Demand held through the year.",
        bullets=[BulletDraft(text="Sales rose", figures=[REVENUE.fact_id])],
    )
    draft = DeckDraft(title="Hold the position", thesis="Growth holds.", slides=[slide])
    frame = DeckFrame("Apple Inc.", "AAPL", "For the committee", memo=memo)
    return resolve(draft, FIGURES, frame)


def test_the_memo_s_thesis_and_catalysts_are_quoted_with_their_figures_before_the_sources() -> None:
    memo = MemoLines(
        version="memo v3",
        recommendation="HOLD, sizing half",
        thesis=f"Services carry the margin at [[{MARGIN.fact_id}]] while hardware slows.",
        catalysts=(
            MemoCatalyst(date="2026-01-29", sign="positive", event="The first-quarter report"),
            MemoCatalyst(
                date="2026-06-08", sign="negative", event="A tariff ruling on [[MSFT:capex:FY2025]]"
            ),
            MemoCatalyst(date="2026-09-10", sign="negative", event="The product launch costs 12% more."),
        ),
        falsifiers=("Gross margin contracts.", "if services growth stalls for two quarters."),
    )
    deck, notes = _deck(memo)
    kinds = [slide.kind for slide in deck.slides]
    assert kinds == ["title", "section", "risks", "watch", "sources"]
    watch = deck.slides[3]
    assert watch.number == 4 and deck.slides[4].number == 5
    assert watch.title == "The memo v3 expects one catalyst by 2026-01-29"
    lines = [b.text for b in watch.bullets]
    assert lines == [
        f"The thesis: Services carry the margin at {MARGIN.display} while hardware slows.",
        "By 2026-01-29, expected to help: The first-quarter report",
        "Wrong if: services growth stalls for two quarters.",  # the first is on the risks slide; no "if: if"
    ]
    assert watch.bullets[0].inline == (MARGIN,)
    # A citation of a figure the deck was not given, and a typed number, are withheld with their lines.
    assert notes.withheld == ["watch: catalyst 2", "watch: catalyst 3"]
    # The quoted figure is checked in both files, like every figure.
    rendered = render(deck)
    for data in (rendered.pptx, rendered.pdf):
        report = check(data, lookup_for(FIGURES))
        assert [f for f in report.figures if f.status != "ok"] == []
    assert any("Operating margin" in b.text for b in deck.slides[4].bullets)  # its source is listed


def test_memo_lines_at_their_longest_fit_the_slide_and_its_word_bound() -> None:
    long_event = "The company reports a quarter in which services, wearables and the installed base " * 2
    memo = MemoLines(
        version="memo v12",
        thesis=("Services carry the margin while hardware slows and the installed base keeps growing. " * 3)[
            :400
        ],
        catalysts=tuple(
            MemoCatalyst(date=f"2026-0{month}-15", sign="positive", event=long_event[:160])
            for month in (3, 6, 9)
        ),
        falsifiers=("Gross margin contracts.", "Growth turns negative for two quarters running."),
    )
    deck, _ = _deck(memo)
    watch = next(slide for slide in deck.slides if slide.kind == "watch")
    # The thesis's opening whole sentences within a paragraph's bound, never cut inside one.
    thesis = watch.bullets[0].text
    assert thesis.startswith("The thesis: Services carry") and thesis.endswith("keeps growing.")
    assert len(thesis.split()) <= 30
    assert len(watch.bullets) <= 4
    # The title counts the catalysts the slide kept, not those the bounds left out (here, every one: each
    # is over a paragraph's 30 words), so it promises none.
    assert not any(b.text.startswith("By 2026-") for b in watch.bullets)
    assert watch.title == "The memo v12's thesis, and what would prove it wrong"
    findings = lint_pptx(render(deck).pptx, deck)
    assert [f for f in findings if f.slide == watch.number] == []


def test_no_memo_no_watch_slide_and_nothing_showable_no_watch_slide() -> None:
    deck, _ = _deck(MemoLines(version="memo v1"))
    assert "watch" not in [slide.kind for slide in deck.slides]
    typed = MemoLines(version="memo v1", thesis="It grows 40% a year.", falsifiers=("One.", "Up 9%."))
    deck, _ = _deck(typed)
    assert "watch" not in [slide.kind for slide in deck.slides]
