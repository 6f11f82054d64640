"""A deck rendered to both its files, as a reader downloads them, for the tests that look at both."""

from __future__ import annotations

from dataclasses import dataclass

from agents.deck.render.pdf import deck_html, pdf_of_html
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Deck


@dataclass(frozen=True)
class Rendered:
    pptx: bytes
    pdf: bytes
    pages: int
    html: str  # what the PDF was drawn from: the humanizer reads its styling


def render(deck: Deck) -> Rendered:
    html = deck_html(deck)
    pdf = pdf_of_html(html)
    return Rendered(pptx=render_pptx(deck), pdf=pdf.pdf, pages=pdf.pages, html=html)
