"""A candidate's PDF read back by drawing only the slides this process never read (agents.deck.candidate,
extract.deck_pdf_texts): a refinement lap changes a few slides of a deck measured a moment before, and
drawing a slide with WeasyPrint cost as much as reading it back."""

from __future__ import annotations

from typing import Any

import pytest

from agents.deck import candidate
from agents.deck.candidate import measure, pdf_read_back
from agents.deck.factcheck import extract
from agents.deck.factcheck.extract import deck_pdf_texts, slide_texts
from agents.deck.render.pdf import deck_html, page_keys, pdf_of_html, render_pdf, slide_pages
from agents.deck.schemas import Scope, SectionPlan
from agents.deck.spec import Deck
from agents.kept import KeptInProcess
from agents.render.pdf import RenderedPdf
from tests.agents.deck.samples import SECTIONS, sample_deck
from tests.agents.render.serving import printing_elsewhere

SLIDES = 6


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pages each PDF the candidate drew had; nothing read before the test."""
    monkeypatch.setattr(extract, "_page_texts", KeptInProcess(512))
    pages: list[int] = []
    draw = pdf_of_html

    def counted(html: str) -> RenderedPdf:
        rendered = draw(html)
        pages.append(rendered.pages)
        return rendered

    monkeypatch.setattr(candidate, "pdf_of_html", counted)
    return pages


def scope() -> Scope:
    return Scope(
        decision="Keep the position?",
        audience="Board",
        required_sections=[SectionPlan(name=name, purpose=f"{name} of the year") for name in SECTIONS],
        key_questions=["Does revenue hold?", "Is the margin safe?"],
    )


def with_display(deck: Deck, slide: int, display: str) -> Deck:
    document: Any = deck.model_dump(mode="json")
    document["slides"][slide - 1]["bullets"][0]["figures"][0]["display"] = display
    return Deck.model_validate(document)


def test_a_lap_draws_only_the_slide_it_changed_and_finds_what_it_prints_wrong(drawn: list[int]) -> None:
    true_deck = sample_deck(SLIDES)
    figures = true_deck.figures()
    first = measure(true_deck, figures, scope())
    assert drawn == [SLIDES] and first.mismatches == [] and first.pages == SLIDES
    drawn.clear()
    right = true_deck.slides[0].bullets[0].figures[0].display
    wrong = with_display(true_deck, 1, "USD 1 M")
    lap = measure(wrong, figures, scope())
    assert drawn == [1]  # slide 1 alone
    assert f"pdf slide 1: mismatch USD 1 M, expected {right}" in lap.mismatches
    assert f"pptx slide 1: mismatch USD 1 M, expected {right}" in lap.mismatches
    assert lap.pages == SLIDES


def test_a_deck_measured_again_draws_nothing_and_measures_the_same(drawn: list[int]) -> None:
    deck = sample_deck(SLIDES)
    first = measure(deck, deck.figures(), scope())
    drawn.clear()
    again = measure(deck, deck.figures(), scope())
    assert drawn == []
    assert again == first


def test_pages_drawn_apart_read_as_the_whole_deck_s_pdf_reads(drawn: list[int]) -> None:
    deck = sample_deck(SLIDES)
    keys = page_keys(deck)
    half = SLIDES // 2

    def draw(indexes: list[int]) -> bytes:
        drawn.append(len(indexes))
        return render_pdf_of(deck, indexes)

    deck_pdf_texts(keys[:half], draw)  # the first slides read, as by an earlier candidate
    texts = deck_pdf_texts(keys, draw)
    assert drawn == [half, SLIDES - half]  # the rest drawn on their own
    whole = slide_texts(render_pdf(deck).pdf)
    assert texts == whole


def test_a_drawing_with_more_pages_than_slides_asked_for_falls_back_to_the_whole_deck(
    drawn: list[int],
) -> None:
    deck = sample_deck(SLIDES)
    keys = page_keys(deck)
    # One slide asked for, two pages drawn: which page is which slide only the whole deck's PDF can tell.
    assert deck_pdf_texts(keys[:1], lambda _: render_pdf_of(deck, [0, 1])) is None
    texts, pages = pdf_read_back(deck, slide_pages(deck))
    assert pages == SLIDES and [text.number for text in texts] == list(range(1, SLIDES + 1))


def render_pdf_of(deck: Deck, indexes: list[int]) -> bytes:
    return pdf_of_html(deck_html(deck, pages=[slide_pages(deck)[i] for i in indexes])).pdf


def test_a_worker_s_print_server_draws_the_candidate_and_it_measures_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a print server (a worker's), the PDF is drawn there while this process renders the PPTX; a
    server busy with a version's print is never waited for: the deck is drawn here instead."""
    monkeypatch.setattr(extract, "_page_texts", KeptInProcess(512))
    deck = sample_deck(SLIDES)
    wrong = with_display(deck, 1, "USD 1 M")
    here = measure(wrong, deck.figures(), scope())
    monkeypatch.setattr(extract, "_page_texts", KeptInProcess(512))
    with printing_elsewhere(monkeypatch) as server:
        there = measure(wrong, deck.figures(), scope())
        assert there == here and any(m.startswith("pdf slide 1: mismatch USD 1 M") for m in there.mismatches)
        monkeypatch.undo()  # WeasyPrint here again
        monkeypatch.setattr(extract, "_page_texts", KeptInProcess(512))
        with server.asking:  # as while the printer thread has a version's PDF printed
            assert measure(wrong, deck.figures(), scope()) == here
