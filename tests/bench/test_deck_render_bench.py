"""Speed of rendering a 20-slide deck to PPTX and to PDF (the render step of every refinement lap).

The goal is under 3 s for both together on the 2-core machine; the number is printed, never asserted.
The first render of a process is timed apart: it loads the fonts and WeasyPrint's caches. Each repeat renders
a deck of its own title: the PPTX cache (agents.deck.render.pptx) answers a deck it has made, in no time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

import pytest

from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from tests.agents.deck.samples import sample_deck
from tests.bench.conftest import BenchReport

pytestmark = pytest.mark.bench

SLIDES = 20
REPEATS = 5


def seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def test_bench_render_a_20_slide_deck_to_pptx_and_pdf(bench_report: BenchReport) -> None:
    deck = sample_deck(SLIDES)
    first_pptx = seconds(lambda: render_pptx(deck))
    first_pdf = seconds(lambda: render_pdf(deck))
    decks = [deck.model_copy(update={"title": f"{deck.title} ({n})"}) for n in range(REPEATS)]
    pptx = [seconds(partial(render_pptx, each)) for each in decks]
    pdf = [seconds(partial(render_pdf, each)) for each in decks]

    bench_report.add(
        f"deck render, {SLIDES} slides",
        first_pptx_s=round(first_pptx, 3),
        first_pdf_s=round(first_pdf, 3),
        first_total_s=round(first_pptx + first_pdf, 3),
        median_pptx_s=round(statistics.median(pptx), 3),
        median_pdf_s=round(statistics.median(pdf), 3),
        median_total_s=round(statistics.median(pptx) + statistics.median(pdf), 3),
    )
