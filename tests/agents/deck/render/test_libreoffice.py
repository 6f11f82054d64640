"""LibreOffice as an independent oracle for the PPTX: a real office suite opens the file we write, lays out
one page per slide and prints every figure's display string on the slide it belongs to (chart data labels
included, which only an application that draws the chart can show)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from agents.deck.render.pptx import render_pptx
from tests.agents.deck.render.test_render import hostile_deck
from tests.agents.deck.samples import sample_deck

SLIDES = 20


@pytest.fixture
def soffice() -> str:
    """The oracle is part of the suite: without it the suite fails, it does not quietly skip."""
    found = shutil.which("soffice")
    if found is None:
        pytest.fail(
            "LibreOffice (soffice) is not installed; scripts/test.sh installs it "
            "(apt-get install -y --no-install-recommends libreoffice-impress-nogui)"
        )
    return found


def libreoffice_pdf(soffice: str, pptx: bytes, workdir: Path) -> bytes:
    source = workdir / "deck.pptx"
    source.write_bytes(pptx)
    profile = workdir / "profile"  # its own profile, so concurrent conversions never share one
    subprocess.run(
        [
            soffice,
            "--headless",
            f"-env:UserInstallation={profile.as_uri()}",
            "--convert-to",
            "pdf",
            "--outdir",
            str(workdir / "out"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return (workdir / "out" / "deck.pdf").read_bytes()


def test_libreoffice_lays_out_one_page_per_slide_with_every_figure_on_its_slide(
    soffice: str, tmp_path: Path
) -> None:
    deck = sample_deck(SLIDES)
    pages = PdfReader(io.BytesIO(libreoffice_pdf(soffice, render_pptx(deck), tmp_path))).pages
    texts = [re.sub(r"\s+", " ", page.extract_text()) for page in pages]

    assert len(pages) == SLIDES
    for slide, text in zip(deck.slides, texts, strict=True):
        for figure in slide.figures():
            assert figure.display in text, (slide.number, figure.display)
        assert slide.title in text


def test_libreoffice_opens_a_deck_of_hostile_text_and_shows_it_as_text(soffice: str, tmp_path: Path) -> None:
    pages = PdfReader(io.BytesIO(libreoffice_pdf(soffice, render_pptx(hostile_deck()), tmp_path))).pages
    first = re.sub(r"\s+", " ", pages[0].extract_text())

    assert len(pages) == 2
    assert "<script>alert(1)</script>" in first
    assert "_x0000_" not in first
